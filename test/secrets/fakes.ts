/**
 * Fake credentials for the secret tests, assembled at run time so that no
 * key-shaped literal sits in the source (secret scanners on the repository
 * would flag it, and rightly).
 */

/** Deterministic pseudo-random characters from `alphabet`. */
export function noise(
  length: number,
  seed = 7,
  alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789",
): string {
  let s = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out += alphabet[s % alphabet.length];
  }
  return out;
}

const join = (...parts: string[]) => parts.join("");

/** One fake per known key shape: [pattern name, secret text]. */
export const FAKE_KEYS: ReadonlyArray<[string, string]> = [
  ["anthropic-api-key", join("sk-", "ant-", "api03-", noise(40, 1))],
  ["openai-api-key", join("sk-", "proj-", noise(48, 2))],
  ["openai-api-key", join("sk-", noise(48, 3))],
  ["github-token", join("gh", "p_", noise(36, 4))],
  ["github-pat", join("github", "_pat_", noise(22, 5), "_", noise(59, 6))],
  ["google-api-key", join("AI", "za", noise(35, 7))],
  ["slack-token", join("xo", "xb-", noise(12, 8, "0123456789"), "-", noise(24, 9))],
  ["aws-access-key-id", join("AK", "IA", noise(16, 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))],
  [
    "json-web-token",
    join("ey", "J", noise(30, 11), ".", "ey", "J", noise(40, 12), ".", noise(43, 13)),
  ],
];

/** An AWS secret access key (40 chars of base64 alphabet). */
export const FAKE_AWS_SECRET = noise(
  40,
  14,
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+",
);

/** A PEM private key block. */
export const FAKE_PEM = join(
  "-----BEGIN ",
  "RSA PRIVATE KEY-----\n",
  noise(64, 15),
  "\n",
  noise(64, 16),
  "\n-----END RSA ",
  "PRIVATE KEY-----",
);
