/**
 * How a database URL is shown in what the commands print (`teamgames journal`'s source line,
 * the bridge's start line): host/databases.ts's `shownUrl`, in process (issue #46).
 */
import { describe, expect, it } from 'vitest';
import { shownUrl } from '../../src/host/databases.js';

describe('a database URL as the commands show it', () => {
  it('keeps the user, the host and the database; the password and every secret parameter become ***', () => {
    expect(shownUrl('postgres://bridge:hunter2-pw@127.0.0.1:5432/shop?sslmode=require&sslpassword=k3y%21&token=t0k')).toBe('postgres://bridge:***@127.0.0.1:5432/shop?sslmode=require&sslpassword=***&token=***');
  });

  it('a text that is no URL is never echoed: a password inside it stays out of the message', () => {
    expect(shownUrl('postgres://bridge:hunter2-pw@[not-a-host/shop')).toBe('(not a URL)');
  });
});
