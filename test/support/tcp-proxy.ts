/**
 * A TCP proxy the test controls, between a server process and PostgreSQL (or anything else), to
 * play the network's and the database's faults:
 *
 *   const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
 *   // point the service at 127.0.0.1:proxy.port
 *   proxy.cut();          // every open connection reset (a failover, a restart)
 *   await proxy.down();   // new connections refused (ECONNREFUSED) until up()
 *   await proxy.up();     // listening again on the same port
 *   proxy.pause();        // connections stay open but no byte goes through (a stalled peer)
 *   proxy.resume();       // the held bytes go through, in order
 *   await proxy.close();
 */
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections open through the proxy now. */
  readonly open: number;
  cut(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let paused = false;
  // Bytes that arrived while paused, in arrival order (both directions), with where they go.
  let held: { to: net.Socket; chunk: Buffer }[] = [];

  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (paused) held.push({ to, chunk });
      else if (!to.destroyed) to.write(chunk);
    });
  };

  const onConnection = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
    forward(client, upstream);
    forward(upstream, client);
  };

  let server = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });

  const proxy: TcpProxy = {
    port,
    get open() {
      return pairs.size;
    },
    cut() {
      for (const { client, upstream } of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    async down() {
      await stopListening();
    },
    async up() {
      if (server.listening) return;
      server = net.createServer(onConnection);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      const pending = held;
      held = [];
      for (const { to, chunk } of pending) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      proxy.cut();
      await stopListening();
    },
  };
  return proxy;
}
