// The unsubscribe link's one-click POST (RFC 8058), as a mail client sends it from the List-Unsubscribe header:
// one place for the stack tests and the benches that press it.

/** POSTs `List-Unsubscribe=One-Click` to the link; resolves with the status, the body read. */
export async function pressOneClick(link: string): Promise<number> {
  const response = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  await response.arrayBuffer();
  return response.status;
}
