/**
 * OpenTelemetry traces, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * is set: a server span per request (named by its route pattern, continuing the caller's
 * `traceparent`), a span per database query under it, and a span per background job run, sent over
 * OTLP/HTTP by a batching exporter that reads the standard OTEL_* variables itself. Unset, the SDK
 * is never loaded and nothing is registered: each query pays one boolean check.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

const tracer = trace.getTracer('voiceplane');
let active = false;

export interface Tracing {
  /** Sends the spans still buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

function tracingConfigured(env: Record<string, string | undefined> = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Registers the SDK when an OTLP endpoint is configured; undefined (and nothing loaded) otherwise. */
export async function startTracing(
  env: Record<string, string | undefined> = process.env,
): Promise<Tracing | undefined> {
  if (!tracingConfigured(env) || env.OTEL_SDK_DISABLED === 'true') return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'voiceplane' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  active = true;
  return {
    async shutdown() {
      active = false;
      await provider.shutdown();
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    traceSpan?: Span;
  }
}

/**
 * A server span per request. The rest of the request runs in its context, so the database spans
 * are its children. `url.path` is not recorded: a trigger URL's path is its credential.
 */
export function registerRequestTracing(app: FastifyInstance): void {
  if (!active) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'http.request_id': request.id },
      },
      parent,
    );
    request.traceSpan = span;
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.traceSpan;
    if (span) {
      const route = request.routeOptions.url;
      if (route) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

/** Runs `work` in a span of its own; `work` unchanged when tracing is off. */
function traced<T>(
  name: string,
  options: { kind: SpanKind; root?: boolean; attributes: Record<string, string | number> },
  work: () => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A database query's span, under the request's or job's (its text has placeholders, never values). */
export function traceQuery<T>(
  query: unknown,
  statementName: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  // A submittable (a cursor) is handed back as it is, not as a promise of it. A query outside any
  // request or job (the job runner's polls and acknowledgements) would be a trace of its own, four
  // a second from an idle process: it is not traced.
  if (!active || typeof (query as { submit?: unknown })?.submit === 'function') return run();
  if (!trace.getSpan(context.active())) return run();
  const text = typeof query === 'string' ? query : String((query as { text?: string })?.text ?? '');
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  return traced(
    statementName ? `${operation} ${statementName}` : operation,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        'db.query.text': text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text,
      },
    },
    run,
  );
}

/** A background job run's span: the root of a trace of its own. */
export function traceJob<T>(
  job: { id: number; queue: string; attempt: number },
  run: () => Promise<T>,
): Promise<T> {
  if (!active) return run();
  return traced(
    `job ${job.queue}`,
    {
      kind: SpanKind.CONSUMER,
      root: true,
      attributes: { 'messaging.destination.name': job.queue, 'job.id': job.id, 'job.attempt': job.attempt },
    },
    run,
  );
}
