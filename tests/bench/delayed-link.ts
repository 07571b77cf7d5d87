// A slow link in front of a loopback server, the independent answer request-path.ts's pricing is checked
// against (tests/stack/request-path.test.ts): a TCP forwarder that delivers every chunk RTT/2 after it was
// sent, each way, and holds a new connection's first bytes until its TCP and TLS 1.3 hand-shakes would have
// completed (`connectionRoundTrips` RTTs after the browser connected). What the browser then measures is
// what those round trips cost, preflights included, without being told which requests are which.
import net from 'node:net';

export interface DelayedLink {
  /** http://127.0.0.1:<port>: the forwarder, to use in place of the server's origin. */
  origin: string;
  close(): Promise<void>;
}

export async function delayedLink(
  target: { host: string; port: number },
  options: { rttMs: number; connectionRoundTrips: number },
): Promise<DelayedLink> {
  const oneWay = options.rttMs / 2;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const connectedAt = Date.now();
    const ready = connectedAt + options.connectionRoundTrips * options.rttMs;
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    // Each direction keeps its order: a chunk never overtakes the one before it.
    const pipe = (from: net.Socket, to: net.Socket, notBefore: () => number) => {
      let last = 0;
      const later = (action: () => void) => {
        const at = Math.max(Date.now() + oneWay, notBefore(), last);
        last = at;
        setTimeout(action, Math.max(0, at - Date.now()));
      };
      from.on('data', (chunk) => later(() => to.destroyed || to.write(chunk)));
      from.on('end', () => later(() => to.destroyed || to.end()));
      from.on('error', () => later(() => to.destroy()));
      from.on('close', () => later(() => to.destroy()));
    };
    pipe(client, upstream, () => ready + oneWay);
    pipe(upstream, client, () => 0);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
