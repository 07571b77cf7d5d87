// Test-only: a DNS server on 127.0.0.1 (dns2) answering TXT questions from a zone the test writes, so the
// domain checks run against good and broken records without the internet. A name the zone lacks is NXDOMAIN.

import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

/** TXT records by name; each record is one string or its character-strings. */
export type Zone = Record<string, Array<string | string[]>>;

export interface LocalDns {
  /** For dnsResolver(): `127.0.0.1:<port>`. */
  server: string;
  zone: Zone;
  stop(): Promise<void>;
}

/** RFC 1035's name error. */
const NXDOMAIN = 3;

export async function startLocalDns(zone: Zone = {}): Promise<LocalDns> {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      for (const question of request.questions) {
        const name = question.name.toLowerCase().replace(/\.$/, '');
        const records = Object.hasOwn(state, name) ? state[name] : undefined;
        if (!records) {
          response.header.rcode = NXDOMAIN;
          continue;
        }
        if (question.type !== Packet.TYPE.TXT) continue;
        for (const record of records) {
          // A character-string holds at most 255 bytes: a longer record goes out in pieces, as DNS hosts send it.
          const data = [record].flat().flatMap((text) => text.match(/[\s\S]{1,255}/g) ?? ['']);
          const answer = { name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data };
          response.answers.push(answer as unknown as (typeof response.answers)[number]);
        }
      }
      send(response);
    },
  });
  const state: Zone = zone;
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const { port } = (server.addresses() as { udp: AddressInfo }).udp;
  return {
    server: `127.0.0.1:${port}`,
    zone: state,
    stop: () => server.close(),
  };
}
