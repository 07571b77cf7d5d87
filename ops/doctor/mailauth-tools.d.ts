// mailauth's own DKIM key lookup (lib/tools.js), which its verifier uses; the package declares types for its
// entry point only.
declare module 'mailauth/lib/tools.js' {
  export function getPublicKey(
    type: 'DKIM' | 'ARC',
    name: string,
    minBitLength: number,
    resolver: (name: string, rrtype: string) => Promise<unknown>,
  ): Promise<{ publicKey: string; rr: string; modulusLength?: number }>;
}
