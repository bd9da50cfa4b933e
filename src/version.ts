/** The SDK's version, sent in `User-Agent`. A test keeps it equal to package.json's. */
export const VERSION = '0.1.0';
