/**
 * The dashboard's two HTML documents: the login form (no script at all) and the shell the
 * client bundle fills (/ui/app.js, /ui/app.css). Both are fixed text; the only value put in is
 * the login form's message, escaped.
 */

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Scripts and styles from this server only; no framing (clickjacking); no referrer leaves the
 * server. (`same-origin`, not `no-referrer`: under no-referrer Chromium sends `Origin: null` with
 * the login form's POST, which the Origin check must refuse.)
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export function loginPage(message = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc-apiserver · log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
body{font:14px system-ui,sans-serif;background:#f4f5f7;color:#222;display:flex;justify-content:center;padding-top:12vh;margin:0}
form{background:#fff;border:1px solid #ddd;border-radius:6px;padding:24px 28px;width:360px}
h1{font-size:18px;margin:0 0 16px}label{display:block;margin-bottom:6px}
input{width:100%;box-sizing:border-box;padding:7px;font:13px monospace;margin-bottom:14px}
button{padding:7px 16px}.err{color:#b00020;margin-bottom:12px}p.hint{color:#666;font-size:12px}
</style></head><body>
<form method="post" action="/ui/api/login">
<h1>svc-apiserver dashboard</h1>
${message ? `<div class="err" id="error">${esc(message)}</div>` : ''}
<label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus>
<button type="submit" id="login">Log in</button>
<p class="hint">Any token the API accepts (the admin token is in the data dir's admin.token). The user needs RBAC permission to get the non-resource URL /ui/*.</p>
</form></body></html>`;
}

export const SHELL = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc-apiserver dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/app.css">
</head><body>
<header><span class="brand">svc-apiserver</span><nav id="nav"></nav>
<form method="post" action="/ui/api/logout" class="logout"><button type="submit">Log out</button></form></header>
<main id="page"><p class="muted">Loading…</p></main>
<script type="module" src="/ui/app.js"></script>
</body></html>`;
