/** White-label shapes (docs/white-label.md): a tenant's brand and its custom domains. */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$';
export const COLOR_PATTERN = '^#[0-9a-fA-F]{6}$';

const Slug = Type.String({
  pattern: SLUG_PATTERN,
  maxLength: 40,
  description:
    'The portal’s path on the platform host: /portal/{slug}. Lowercase letters, digits, inner hyphens.',
  examples: ['acme-voice'],
});
const BrandName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', examples: ['Acme Voice'] });
const LogoUrl = Type.String({
  format: 'uri',
  pattern: '^https://[^/?#\\s@]+\\.[^/?#\\s@]+(?:[/?#]|$)',
  maxLength: 2000,
  description: 'An https URL of the logo image, shown in the portal and the sign-in page.',
  examples: ['https://cdn.acme.example/logo.png'],
});
const PrimaryColor = Type.String({ pattern: COLOR_PATTERN, description: '#rrggbb', examples: ['#0b5fff'] });
const SupportEmail = Type.String({ format: 'email', maxLength: 254, examples: ['help@acme.example'] });

export const Branding = Type.Object(
  {
    slug: Nullable(Slug),
    brand_name: Nullable(BrandName),
    logo_url: Nullable(LogoUrl),
    primary_color: Nullable(PrimaryColor),
    support_email: Nullable(SupportEmail),
    /** What clients see: brand_name, or the tenant's name when it has none. */
    display_name: Type.String(),
    /** Where the tenant's clients sign in: its verified custom domain, else the platform host. */
    portal_url: Type.String({ examples: ['https://portal.acme.example/portal'] }),
    updated_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type Branding = Static<typeof Branding>;

export const UpdateBrandingBody = Type.Object(
  {
    slug: Type.Optional(Nullable(Slug)),
    brand_name: Type.Optional(Nullable(BrandName)),
    logo_url: Type.Optional(Nullable(LogoUrl)),
    primary_color: Type.Optional(Nullable(PrimaryColor)),
    support_email: Type.Optional(Nullable(SupportEmail)),
  },
  { additionalProperties: false },
);
export type UpdateBrandingBody = Static<typeof UpdateBrandingBody>;

export const Domain = Type.Object(
  {
    id: Type.String({ examples: ['dom_8fK2'] }),
    hostname: Type.String({ examples: ['portal.acme.example'] }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    verification: Type.Object(
      {
        type: Type.Literal('TXT'),
        name: Type.String({ examples: ['_voiceplane.portal.acme.example'] }),
        value: Type.String({ examples: ['voiceplane-verification=3kq…'] }),
      },
      { additionalProperties: false, description: 'The DNS record that proves the domain is the tenant’s.' },
    ),
    verified_at: Nullable(Timestamp),
    checked_at: Nullable(Timestamp),
    /** What the last verification found wrong; null once verified or before any check. */
    check_problem: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type Domain = Static<typeof Domain>;

export const AddDomainBody = Type.Object(
  {
    hostname: Type.String({
      minLength: 3,
      maxLength: 253,
      description: 'A DNS name the agency controls, e.g. portal.acme.example (no scheme, port or path).',
      examples: ['portal.acme.example'],
    }),
  },
  { additionalProperties: false },
);
export type AddDomainBody = Static<typeof AddDomainBody>;
