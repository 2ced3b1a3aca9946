import type { PhoneNumberRow } from './repository.js';
import type { OperatorPhoneNumber, PhoneNumber } from './schemas.js';

export function toPhoneNumber(row: PhoneNumberRow): PhoneNumber {
  return {
    phone_number: row.phone_number,
    inbound_agent_id: row.inbound_agent_id,
    label: row.label,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toOperatorPhoneNumber(row: PhoneNumberRow): OperatorPhoneNumber {
  return {
    ...toPhoneNumber(row),
    tenant_id: row.tenant_id,
    engine: row.engine,
    engine_number_id: row.engine_number_id,
  };
}
