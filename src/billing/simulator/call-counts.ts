/** How many times each operation of the simulated processor ran (tests count them), and how many were replays. */
export type CallCounts = Record<
  | 'createCustomer'
  | 'attachPaymentMethod'
  | 'detachPaymentMethod'
  | 'createPrice'
  | 'createSubscription'
  | 'changePrice'
  | 'cancelSubscription'
  | 'cancelAtPeriodEnd'
  | 'retrieveSubscription'
  | 'findSubscriptionByOperation'
  | 'chargeCustomer'
  | 'findCharge'
  | 'createInvoiceItem'
  | 'findInvoiceItem'
  | 'createInvoice'
  | 'findInvoice'
  | 'retrieveInvoice'
  | 'finalizeInvoice'
  | 'payInvoice',
  number
> & { replayed: number };
