/**
 * Suspending a tenant, as the operator console's tenant page asks for it. The tenants capability
 * has no suspension yet: until it does, `suspensionNotAvailable` answers every tenant as active
 * and refuses the action with a message (409), so the page and its role checks are in place.
 * MERGE NOTE: wire the tenants service's suspend/lift/isSuspended here once tenants have them.
 */
import { ApiError } from '../../core/errors.js';

export interface TenantSuspension {
  isSuspended(tenantId: string): Promise<boolean>;
  suspend(tenantId: string): Promise<void>;
  lift(tenantId: string): Promise<void>;
}

const notYet = () =>
  new ApiError('conflict', 'Suspending tenants is not available in this version of the platform yet.');

export const suspensionNotAvailable: TenantSuspension = {
  isSuspended: async () => false,
  suspend: async () => {
    throw notYet();
  },
  lift: async () => {
    throw notYet();
  },
};
