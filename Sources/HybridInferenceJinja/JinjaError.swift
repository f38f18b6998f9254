/// Why a chat template could not be rendered, and where.
///
/// A template that fails is never half-applied: the caller falls back to
/// llama.cpp's built-in matcher and logs this error, so a wrong prompt is
/// always visible rather than silently different.
package struct JinjaError: Error, Equatable, Sendable, CustomStringConvertible {
  package enum Kind: Equatable, Sendable {
    /// The template is not valid Jinja (as far as this engine reads it).
    case syntax
    /// Valid Jinja this engine does not implement (`include`, an unknown filter, ...).
    case unsupported
    /// An error while rendering (a type error, an undefined value used wrongly).
    case runtime
    /// The template called `raise_exception(message)`.
    case raised
    /// The render passed a limit of its `JinjaBudget` (steps, bytes, depth, ...).
    case limit
    /// The request the render served was cancelled.
    case cancelled
  }

  package var kind: Kind
  var message: String
  /// The 1-based template line the error comes from.
  var line: Int

  package init(kind: Kind, message: String, line: Int) {
    self.kind = kind
    self.message = message
    self.line = line
  }

  package var description: String { "chat template line \(line): \(message)" }
}
