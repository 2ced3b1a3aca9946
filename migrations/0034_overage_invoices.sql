-- Overage billed at once (docs/usage.md): the job makes the invoice item pending on the customer, then
-- a one-off invoice that takes it, finalizes it and pays it with the card on file. The row keeps the
-- invoice and its outcome: paid, or unpaid when the card was declined (the invoice stays open at the
-- processor, failure_message says why). invoiced: the item is on an invoice whose payment we did not
-- make (a renewal took it first, or a row from before this migration, whose item waits for the next
-- renewal).
ALTER TABLE overage_charges ADD COLUMN processor_invoice_id text;
ALTER TABLE overage_charges DROP CONSTRAINT overage_charges_status_check;
ALTER TABLE overage_charges ADD CONSTRAINT overage_charges_status_check
  CHECK (status IN ('pending', 'invoiced', 'paid', 'unpaid', 'recorded', 'failed'));
