/** The overview: the agency's business at a glance. */
import type { FastifyInstance } from 'fastify';
import { html } from './html.js';
import { sendPage } from './layout.js';

export async function overviewPages(app: FastifyInstance) {
  app.get('/', async (request, reply) =>
    sendPage(request, reply, {
      title: 'Overview',
      section: 'overview',
      body: html`<p>Welcome.</p>`,
    }),
  );
}
