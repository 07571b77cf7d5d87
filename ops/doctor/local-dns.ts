// Test-only: a DNS server on 127.0.0.1 (dns2) answering TXT, MX and NS questions from a zone the test writes, so
// the domain checks run against good and broken records without the internet. A name the zone lacks is NXDOMAIN.

import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

/** Records by name: a TXT record is one string or its character-strings; MX and NS records are objects. */
export type Zone = Record<
  string,
  Array<string | string[] | { mx: string; priority?: number } | { ns: string }>
>;

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
        const base = { name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: 1 };
        for (const record of records) {
          let answer: object | null = null;
          if (typeof record === 'object' && 'mx' in record) {
            if (question.type === Packet.TYPE.MX)
              answer = { ...base, exchange: record.mx, priority: record.priority ?? 10 };
          } else if (typeof record === 'object' && 'ns' in record) {
            if (question.type === Packet.TYPE.NS) answer = { ...base, ns: record.ns };
          } else if (question.type === Packet.TYPE.TXT) {
            // A character-string holds at most 255 bytes: a longer record goes out in pieces, as DNS hosts send it.
            const data = [record].flat().flatMap((text) => text.match(/[\s\S]{1,255}/g) ?? ['']);
            answer = { ...base, data };
          }
          if (answer) response.answers.push(answer as unknown as (typeof response.answers)[number]);
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
