/**
 * `voiceplane operators create`: a member of the operator's staff, who signs in to /operator
 * with email, password and a TOTP code. The first owner is made this way (the console's owners
 * invite the rest). The password is generated (or read from stdin) and the TOTP secret with its
 * otpauth:// URI printed once: nothing shows them again.
 */
import { validated } from '../core/http/validation.js';
import { randomBase62 } from '../core/ids.js';
import { CreateStaffBody } from '../staff/schemas.js';
import { given, stringFlag } from './args.js';
import type { Command } from './command.js';

export const createOperatorCommand: Command = {
  name: 'operators create',
  summary: 'Create an operator staff account (the first owner) for the operator console at /operator.',
  description: [
    'Creates a staff member of the operator console with the role owner, admin or support.',
    'The password is generated (20 random letters and digits) and shown once, or read from stdin with',
    '--password-stdin. Every staff account has a TOTP second factor: its secret and otpauth:// URI are',
    'printed once; add them to an authenticator app before signing in.',
  ],
  flags: {
    email: {
      type: 'string',
      required: true,
      placeholder: '<email>',
      description: "The staff member's email.",
    },
    role: {
      type: 'string',
      required: true,
      placeholder: 'owner|admin|support',
      description: 'owner: everything, staff included; admin: everything but staff; support: read only.',
    },
    name: { type: 'string', placeholder: '<name>', description: 'Their name (1-200 characters).' },
    'password-stdin': {
      type: 'boolean',
      description: 'Read the password from stdin instead of generating one.',
    },
  },
  fieldFlags: { password: 'the password' },
  examples: [
    'voiceplane operators create --email ops@platform.example --role owner',
    'voiceplane operators create --email ops@platform.example --role owner --password-stdin < password.txt',
  ],
  async run(context, flags) {
    const generated = flags['password-stdin'] ? undefined : randomBase62(20);
    const password = generated ?? (await context.readStdin('password-stdin'));
    const body = validated(
      CreateStaffBody,
      given({
        email: stringFlag(flags, 'email'),
        password,
        name: stringFlag(flags, 'name'),
        role: stringFlag(flags, 'role'),
      }),
    );
    const services = await context.services();
    const { staff, totp } = await services.staff.create(body);
    const signInUrl = `${context.config.publicBaseUrl}/operator/sign-in`;
    return {
      json: { data: staff, sign_in_url: signInUrl, generated_password: generated ?? null, totp },
      text: [
        `Created ${staff.role} ${staff.id} (${staff.email}) of the operator console.`,
        `Sign in at ${signInUrl}`,
        `  email:        ${staff.email}`,
        generated
          ? `  password:     ${generated}   (generated; shown only now)`
          : '  password:     the one read from stdin',
        `  TOTP secret:  ${totp.secret}   (shown only now)`,
        `  TOTP URI:     ${totp.uri}`,
        'Add the secret (or the URI) to an authenticator app: sign-in asks for its 6-digit code.',
      ],
    };
  },
};
