// Safe HTML text (HTML Living Standard §13.1.2.6, restrictions on the contents of raw text and
// escapable raw text; §13.3, serializing HTML fragments): every piece of user data is written through
// `escapeHtml`, which escapes the five characters that could end a text run or a quoted attribute
// value, so a stored `<script>` or `"><img onerror=…>` is shown, never run. A link's target is
// always a path the server made (lib/resources/common.ts `link`), never a value from an item.

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};

/** Text that is safe as element content and inside a double-quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character] as string);
}

/** `<a rel="…" href="…">label</a>`; `href` is a link the server made. */
export function anchor(rel: string, href: string, label: string): string {
  return `<a rel="${escapeHtml(rel)}" href="${escapeHtml(href)}">${escapeHtml(label)}</a>`;
}
