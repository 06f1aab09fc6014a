/**
 * The loader's one error: every step (reading, parsing, interpolating, overriding, validating,
 * resolving paths) reports what a user can fix as lines of a `ConfigError`.
 */

/** A manifest that cannot be loaded; `messages` holds one human-readable line per problem. */
export class ConfigError extends Error {
  /** One line per problem, without stack or prefix. */
  readonly messages: readonly string[];

  constructor(messages: string[]) {
    super(messages.join("\n"));
    this.name = "ConfigError";
    this.messages = messages;
  }
}
