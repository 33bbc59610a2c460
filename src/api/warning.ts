/**
 * The `Warning: 299 - "<text>"` header value of an API warning (RFC 7234 §5.5, as the reference's
 * `net.NewWarningHeader` builds it for `299` warnings).
 *
 * The text is quoted as JSON (control characters escaped, so no CR/LF reaches the header), and
 * sent as its UTF-8 bytes, as the reference sends it. A header value is a byte string: Headers
 * refuses a character past U+00FF, so each UTF-8 byte is written as the Latin-1 character of
 * that byte. Example: the text `ü` becomes `299 - "Ã¼"` in JavaScript, the bytes
 * `299 - "\xc3\xbc"` on the wire.
 */
export function warningHeader(text: string): string {
  return Buffer.from(`299 - ${JSON.stringify(text)}`, 'utf8').toString('latin1');
}
