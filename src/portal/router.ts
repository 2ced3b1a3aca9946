/**
 * The portal's own small route table. Which pages a URL means depends on the Host, not only the
 * path: on a tenant's custom domain `/portal/agents` is the agents list, while on the platform host
 * it is the home page of the portal whose slug is `agents`. Fastify's router decides before any
 * hook could look the Host up, so the surface registers one catch-all route, finds the portal
 * (src/portal/plugin.ts), and matches the rest of the path here. No slug is reserved this way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface PortalPage {
  method: 'GET' | 'POST';
  /** The path inside the portal, with `:name` parameters: `/agents/:id/publish`. */
  path: string;
  /** Open to signed-out visitors (the sign-in page); every other page needs the portal's user. */
  public?: boolean;
  handler(
    request: FastifyRequest,
    reply: FastifyReply,
    params: Record<string, string>,
  ): Promise<FastifyReply>;
}

export type PortalMatch =
  | { kind: 'page'; page: PortalPage; params: Record<string, string> }
  | { kind: 'wrong-method' }
  | { kind: 'none' };

interface CompiledPage {
  page: PortalPage;
  pattern: RegExp;
  names: string[];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compile(page: PortalPage): CompiledPage {
  const names: string[] = [];
  const source = page.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return escapeRegExp(segment);
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { page, pattern: new RegExp(`^${source}$`), names };
}

export function createRouter(pages: PortalPage[]) {
  const compiled = pages.map(compile);
  return {
    /** The page for a method and a path inside the portal (`/agents/agt_…`), with its decoded parameters. */
    match(method: string, path: string): PortalMatch {
      const normalized = path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
      const wanted = method === 'HEAD' ? 'GET' : method;
      let pathMatched = false;
      for (const { page, pattern, names } of compiled) {
        const found = pattern.exec(normalized);
        if (!found) continue;
        pathMatched = true;
        if (page.method !== wanted) continue;
        const params: Record<string, string> = {};
        try {
          names.forEach((name, index) => {
            params[name] = decodeURIComponent(found[index + 1]);
          });
        } catch {
          return { kind: 'none' };
        }
        return { kind: 'page', page, params };
      }
      return pathMatched ? { kind: 'wrong-method' } : { kind: 'none' };
    },
  };
}
