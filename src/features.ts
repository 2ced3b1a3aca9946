/**
 * The capabilities plugged into the core, in one list. Each install function receives the
 * services and adds what its feature needs: services of its own (declared on `Services` by
 * declaration merging), routes (services.partnerRouteExtensions, operatorRouteExtensions,
 * rootRouteExtensions), job handlers (services.jobHandlers), in-transaction user hooks
 * (services.userLifecycle), demo seed data and close hooks.
 */
import type { Services } from './app.js';
import { installCalls } from './calls/install.js';
import { installEmails } from './emails/install.js';
import { installRateLimits } from './rate-limits/install.js';
import { installSubscriptions } from './subscriptions/install.js';

export type FeatureInstaller = (services: Services) => void;

export const features: FeatureInstaller[] = [
  installCalls,
  installEmails,
  installRateLimits,
  installSubscriptions,
];
