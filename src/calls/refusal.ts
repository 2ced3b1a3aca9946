/** Why a call to an agent is refused before anything is stored (the webhook, the API, campaigns). */
import type { WebhookTarget } from '../agents/repository.js';
import { ApiError } from '../core/errors.js';
import { accountSuspended } from '../core/http/auth.js';
import { balanceRefusal } from '../wallets/refusal.js';

/** The refusal an agent earns, if any, in the order docs/design-choices.md gives. */
export function refusalOf(target: WebhookTarget | undefined, missing: () => ApiError): ApiError | undefined {
  if (!target || target.owner_deleted_at) return missing();
  if (target.tenant_suspended) return accountSuspended();
  if (target.published_version === null || target.prompt === null) {
    return new ApiError(
      'agent_not_published',
      'The agent has no published version; publish it before triggering calls.',
    );
  }
  if (target.owner_status === 'blocked') {
    return new ApiError('agent_unavailable', 'The agent’s owner is blocked; the agent cannot place calls.');
  }
  return balanceRefusal(target.wallet_balance_minutes, target.credit_balance_minutes);
}
