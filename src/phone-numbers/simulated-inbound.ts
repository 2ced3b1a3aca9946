/**
 * The simulator's inbound call (TELEPHONY=simulated): `to`, one of the imported numbers, rings
 * with `from` calling, and takes the inbound path as a voice engine's call would: answered by the
 * number's inbound agent (then played by the pipeline like any simulated call) or declined and
 * recorded as failed. The console's "Simulate an inbound call" button and the operator's
 * `POST /admin/v1/simulator/inbound-calls` both come here.
 */
import { validationFailed } from '../core/errors.js';
import type { InboundCallService } from './inbound.js';
import type { SimulateInboundCallBody } from './schemas.js';
import type { PhoneNumberService } from './service.js';

/** The id of the call recorded for it. 422 on `to` when it is not an imported number. */
export async function simulateInboundCall(
  phoneNumbers: PhoneNumberService,
  inbound: InboundCallService,
  input: SimulateInboundCallBody,
  tenantId?: string,
): Promise<string> {
  const number = await phoneNumbers.get(input.to).catch(() => undefined);
  if (!number || (tenantId !== undefined && number.tenant_id !== tenantId)) {
    throw validationFailed([{ field: 'to', issue: 'must be an imported phone number.' }]);
  }
  const answer = await inbound.answer('simulated', {
    engineNumberId: number.engine_number_id,
    from: input.from,
    mode: 'answer',
  });
  const callId = answer.callId;
  if (!callId) throw new Error(`the simulated inbound call was not recorded (${answer.kind})`);
  return callId;
}
