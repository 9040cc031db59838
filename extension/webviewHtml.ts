import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** The folder of the webviews' scripts and styles (packaged: .vscodeignore keeps media/**). */
export const MEDIA_DIR = 'media';

/**
 * The HTML page of a hit view's webview: a strict Content-Security-Policy
 * (nothing from the network; the script only with this page's nonce; styles
 * only from the extension's media folder), the shared stylesheet and the
 * view's script from media/ after the shared media/hitViewKit.js.
 */
export function hitViewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string, script: string): string {
  const nonce = randomBytes(16).toString('base64');
  const media = (f: string): vscode.Uri => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, MEDIA_DIR, f));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${media('hitViews.css')}">
<title>${escapeHtml(title)}</title>
</head>
<body>
<header id="header"><span id="title">${escapeHtml(title)}</span><span id="status"></span></header>
<main id="root"><p class="empty">Loading...</p></main>
<div id="tooltip" role="tooltip" hidden></div>
<script nonce="${nonce}" src="${media('hitViewKit.js')}"></script>
<script nonce="${nonce}" src="${media(script)}"></script>
</body>
</html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
