/** Plugs welcome emails into the core: the user-creation hook, the delivery job, the operator list. */
import type { Services } from '../app.js';
import { emailAdminRoutes } from './admin-routes.js';
import { createEmailService, EMAIL_QUEUE, type EmailService } from './service.js';
import { createTemplateStore } from './templates.js';
import { createSmtpSender } from './transports.js';

declare module '../app.js' {
  interface Services {
    /** Welcome emails (set by installEmails; optional because createServices builds Services before the features run). */
    emails?: EmailService;
  }
}

export function installEmails(services: Services): void {
  const sender = createSmtpSender();
  const emails = createEmailService({
    db: services.database.db,
    clock: services.clock,
    templates: createTemplateStore(),
    sender,
    secrets: services.secrets,
  });
  services.emails = emails;
  services.userLifecycle.created.push((tx, user) => emails.onUserCreated(tx, user));
  services.jobHandlers[EMAIL_QUEUE] = (job) => emails.deliver(job);
  services.operatorRouteExtensions.push(async (app) => {
    await app.register(emailAdminRoutes, { emails, tenants: services.tenants });
  });
  services.closeHooks.push(() => sender.close());
}
