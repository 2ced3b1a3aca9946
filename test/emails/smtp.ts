/** A real SMTP server for the email tests (smtp-server on a free port), with a tiny MIME reader. */
import net from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMessage {
  envelope: { from: string; to: string[] };
  /** Lower-case header names, unfolded values. */
  headers: Record<string, string>;
  text: string;
  html: string;
  raw: string;
  user: string | undefined;
}

export interface TestSmtpServer {
  port: number;
  url(user?: string, pass?: string): string;
  messages: ReceivedMessage[];
  /** Authentication attempts, with the password the client sent. */
  logins: { user: string; pass: string }[];
  /** The client address of every connection opened, in order. */
  connections: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface SmtpBehaviour {
  /** user → password; when set, AUTH is required. */
  users?: Record<string, string>;
  /** Recipients refused with 550 at RCPT TO. */
  rejectRecipient?(address: string): boolean;
  /** Called after DATA is fully read: return an SMTP error to refuse the message. */
  afterData?(message: ReceivedMessage): { code: number; message: string } | undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** A stopped server on a free port; `start()` listens (again) on that same port. */
export async function createSmtpServer(behaviour: SmtpBehaviour = {}): Promise<TestSmtpServer> {
  const port = await freePort();
  const messages: ReceivedMessage[] = [];
  const logins: { user: string; pass: string }[] = [];
  const connections: string[] = [];
  let server: SMTPServer | undefined;

  const options: SMTPServerOptions = {
    secure: false,
    disabledCommands: behaviour.users ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !behaviour.users,
    logger: false,
    // stop() ends open (pooled, idle) client connections at once instead of after 30 s.
    closeTimeout: 100,
    onConnect(session, callback) {
      connections.push(session.remoteAddress);
      callback();
    },
    onAuth(auth, _session, callback) {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
      if (behaviour.users && auth.username && behaviour.users[auth.username] === auth.password) {
        callback(null, { user: auth.username });
      } else {
        callback(smtpError(535, 'Authentication credentials invalid'));
      }
    },
    onRcptTo(address, _session, callback) {
      if (behaviour.rejectRecipient?.(address.address))
        callback(smtpError(550, `Mailbox ${address.address} does not exist`));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const message: ReceivedMessage = {
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          ...parseMessage(raw),
          raw,
          user: typeof session.user === 'string' ? session.user : undefined,
        };
        messages.push(message);
        const refusal = behaviour.afterData?.(message);
        if (refusal) callback(smtpError(refusal.code, refusal.message));
        else callback(null, 'Queued');
      });
    },
  };

  return {
    port,
    url: (user, pass) =>
      `smtp://${user !== undefined ? `${encodeURIComponent(user)}:${encodeURIComponent(pass ?? '')}@` : ''}127.0.0.1:${port}`,
    messages,
    logins,
    connections,
    async start() {
      server = new SMTPServer(options);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', () => resolve());
      });
    },
    async stop() {
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

function splitHead(raw: string): { head: string; body: string } {
  const at = raw.indexOf('\r\n\r\n');
  return at === -1 ? { head: raw, body: '' } : { head: raw.slice(0, at), body: raw.slice(at + 4) };
}

function parseHeaders(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable': {
      const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
      return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
    }
    default:
      return body;
  }
}

/** Top-level headers, and the text/plain and text/html parts (one level of multipart). */
export function parseMessage(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const { head, body } = splitHead(raw);
  const headers = parseHeaders(head);
  let text = '';
  let html = '';
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  const parts = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((part) => part.replace(/^\r\n/, ''))
    : [`${head}\r\n\r\n${body}`];
  for (const part of parts) {
    const section = splitHead(part);
    const partHeaders = boundary ? parseHeaders(section.head) : headers;
    const content = decodeBody(section.body.replace(/\r\n$/, ''), partHeaders['content-transfer-encoding']);
    const type = (partHeaders['content-type'] ?? 'text/plain').toLowerCase();
    if (type.startsWith('text/plain')) text = content;
    else if (type.startsWith('text/html')) html = content;
  }
  return { headers, text, html };
}

/** Decodes RFC 2047 encoded words (=?UTF-8?Q?…?= / =?UTF-8?B?…?=) in a header value. */
export function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([qb])\?([^?]*)\?=/gi, (_m, kind: string, data: string) =>
      kind.toLowerCase() === 'b'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeBody(data.replace(/_/g, ' '), 'quoted-printable'),
    );
}
