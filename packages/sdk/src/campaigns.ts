/** Campaigns: batch calls of one agent to a list of recipients (docs/campaigns.md). */
import type { PageRequest } from './pagination.js';
import { type Body, type Data, type Item, type Query, Resource, segment } from './resources.js';
import type { RequestOptions } from './transport.js';

export class Campaigns extends Resource {
  /** createCampaign — JSON recipients; an Idempotency-Key is generated unless you pass one. */
  create(body: Body<'createCampaign'>, options?: RequestOptions): Promise<Data<'createCampaign'>> {
    return this.data({
      method: 'POST',
      path: '/api/v1/campaigns',
      body,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** getCampaign */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getCampaign'>> {
    return this.data({ method: 'GET', path: `/api/v1/campaigns/${segment(id)}`, options });
  }
  /** listCampaigns */
  list(query?: Query<'listCampaigns'>): PageRequest<Item<'listCampaigns'>> {
    return this.paged<'listCampaigns'>('/api/v1/campaigns', query);
  }
  /** addCampaignRecipients — an Idempotency-Key is generated unless you pass one. */
  addRecipients(
    id: string,
    body: Body<'addCampaignRecipients'>,
    options?: RequestOptions,
  ): Promise<Data<'addCampaignRecipients'>> {
    return this.data({
      method: 'POST',
      path: `/api/v1/campaigns/${segment(id)}/recipients`,
      body,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** listCampaignRecipients */
  recipients(
    id: string,
    query?: Query<'listCampaignRecipients'>,
  ): PageRequest<Item<'listCampaignRecipients'>> {
    return this.paged<'listCampaignRecipients'>(`/api/v1/campaigns/${segment(id)}/recipients`, query);
  }
  /** startCampaign */
  start(id: string, options?: RequestOptions): Promise<Data<'startCampaign'>> {
    return this.data({ method: 'POST', path: `/api/v1/campaigns/${segment(id)}/start`, options });
  }
  /** pauseCampaign */
  pause(id: string, options?: RequestOptions): Promise<Data<'pauseCampaign'>> {
    return this.data({ method: 'POST', path: `/api/v1/campaigns/${segment(id)}/pause`, options });
  }
  /** resumeCampaign */
  resume(id: string, options?: RequestOptions): Promise<Data<'resumeCampaign'>> {
    return this.data({ method: 'POST', path: `/api/v1/campaigns/${segment(id)}/resume`, options });
  }
  /** cancelCampaign */
  cancel(id: string, options?: RequestOptions): Promise<Data<'cancelCampaign'>> {
    return this.data({ method: 'POST', path: `/api/v1/campaigns/${segment(id)}/cancel`, options });
  }
  /** retryCampaign — calls again the recipients whose last call ended no_answer or failed. */
  retry(id: string, options?: RequestOptions): Promise<Data<'retryCampaign'>> {
    return this.data({ method: 'POST', path: `/api/v1/campaigns/${segment(id)}/retry`, options });
  }
}
