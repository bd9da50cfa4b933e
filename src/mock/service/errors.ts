/**
 * Thrown by the mock's admin operations (`completePayment`, `addPurchase`, …) when asked
 * for something that cannot be done; over HTTP the `/__mock/…` routes answer it as JSON
 * `{"error": message}` with {@link MockAdminError.status}.
 *
 * @example
 * ```ts
 * try { mock.cancelPayment(id); } catch (e) { if (e instanceof MockAdminError) console.log(e.status); }
 * ```
 */
export class MockAdminError extends Error {
  /** The HTTP status of the admin route: 400 bad input, 404 unknown thing, 409 wrong state. */
  readonly status: 400 | 404 | 409;

  /** Creates the error; `message` says what was asked and why it cannot be done. */
  constructor(status: 400 | 404 | 409, message: string) {
    super(message);
    this.name = 'MockAdminError';
    this.status = status;
  }
}
