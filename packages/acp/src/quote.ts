/**
 * Untrusted input for an error message: its JSON text when short, else the first `max`
 * characters of that text and its length. Errors never echo bulk input.
 */
export function quote(value: unknown, max = 80): string {
  const text = String(JSON.stringify(value))
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
}
