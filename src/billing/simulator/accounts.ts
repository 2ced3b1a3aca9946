/**
 * Connected accounts (Stripe Connect) in the simulator: one store holds the objects of every
 * account, each object labelled with the account it was made in (`_account`, absent for the
 * platform's own), and a view of the store for one account sees only that account's objects, as
 * Stripe answers `resource_missing` for an object of another account. The simulated adapter takes
 * one view per bound account; the Stripe-protocol test server takes the account of each request
 * (its `Stripe-Account` header).
 */
import type { EngineStore, StoredObject } from './objects.js';

type Labelled = StoredObject & { _account?: string };

/** The objects of the account `accountOf()` names (null: the platform's own) in `store`. */
export function accountStore(store: EngineStore, accountOf: () => string | null): EngineStore {
  const visible = <T extends StoredObject>(doc: T | undefined): T | undefined => {
    if (!doc) return undefined;
    return ((doc as Labelled)._account ?? null) === accountOf() ? doc : undefined;
  };
  return {
    async get(id) {
      return visible(await store.get(id));
    },
    async put(doc, tenantId) {
      const account = accountOf();
      const { _account, ...rest } = doc as Labelled;
      const labelled: Labelled = account ? { ...rest, _account: account } : (rest as StoredObject);
      await store.put(labelled, tenantId);
    },
    async subscriptionsOf(customerId) {
      return (await store.subscriptionsOf(customerId)).filter((sub) => visible(sub) !== undefined);
    },
  };
}
