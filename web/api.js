// api.js: the server's JSON API (docs/serve.md). The page lives at
// /<token>/, so relative URLs carry the token; a POST also sends it in the
// X-Rewind-Token header, as the server requires.
export const token = location.pathname.split('/')[1] || '';

export async function get(path, args = {}, signal = undefined) {
  const q = new URLSearchParams(args).toString();
  const r = await fetch('api/' + path + (q ? '?' + q : ''), { signal });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

export async function post(path, body) {
  const r = await fetch('api/' + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Rewind-Token': token },
    body: JSON.stringify(body),
  });
  const out = await r.json();
  if (!r.ok) throw new Error(out.error || r.statusText);
  return out;
}
