/** The operator console's one list of pages (docs/operator-console.md). */
import { operatorAuditPages } from './pages/audit.js';
import { operatorBrandPages } from './pages/brand.js';
import { operatorOperationsPages } from './pages/operations.js';
import { operatorPhoneNumberPages } from './pages/phone-numbers.js';
import { operatorRevenuePages } from './pages/revenue.js';
import { operatorSignInPages } from './pages/sign-in.js';
import { operatorStaffPages } from './pages/staff.js';
import { operatorTenantPage } from './pages/tenant.js';
import { operatorTenantPages } from './pages/tenants.js';
import type { OperatorPages } from './plugin.js';

export const OPERATOR_CONSOLE_PAGES: OperatorPages[] = [
  operatorSignInPages,
  operatorTenantPages,
  operatorTenantPage,
  operatorPhoneNumberPages,
  operatorRevenuePages,
  operatorOperationsPages,
  operatorBrandPages,
  operatorStaffPages,
  operatorAuditPages,
];
