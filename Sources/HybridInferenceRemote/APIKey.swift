import Foundation
import HybridInferenceCore

/// An API key that cannot be printed.
///
/// Every textual form (`description`, `debugDescription`, `dump`, string
/// interpolation, mirrors) shows a placeholder, so a key that ends up inside
/// a logged or reflected value still does not leak. Only `value` has the key,
/// and each client reads it for one place: its auth header (`x-goog-api-key`
/// for Gemini, `Authorization: Bearer` for OpenAI-compatible servers).
package struct APIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable, SecretRedacting
{
  package let value: String

  package init?(_ value: String?) {
    guard let value, !value.isEmpty else { return nil }
    self.value = value
  }

  package var description: String { "<redacted>" }
  package var debugDescription: String { "<redacted>" }
  package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

  /// `text` with every occurrence of the key replaced, for server messages
  /// that might quote what they were sent.
  package func redact(_ text: String) -> String {
    text.replacingOccurrences(of: value, with: "<redacted>")
  }

  /// The key from the environment: `GEMINI_API_KEY`, then `GOOGLE_API_KEY`
  /// (the first is the name Google documents for the Gemini API).
  package static func fromEnvironment(_ environment: [String: String]) -> APIKey? {
    APIKey(environment["GEMINI_API_KEY"]) ?? APIKey(environment["GOOGLE_API_KEY"])
  }
}

/// Something that can take its secrets out of a text: a key, or a model's
/// authorizer (its key or its recent tokens). Error mappings take one, so a
/// server message that quotes what it was sent is redacted before it travels.
package protocol SecretRedacting: Sendable {
  /// `text` with every secret replaced by `<redacted>`.
  func redact(_ text: String) -> String
}
