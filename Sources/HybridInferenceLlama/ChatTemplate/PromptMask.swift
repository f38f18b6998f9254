import HybridInferenceCore
import HybridInferenceJinja

/// Stands in for every string of the conversation that a template receives,
/// so that `RenderedPrompt` can tell the template's own markup from text.
///
/// What is masked: every string the conversation brings and the library did
/// not write: each message's body, each tool call's id, name, argument keys
/// and string values, each tool output's call id and tool name, and of the
/// tools offered their names, descriptions and the `description` and `title`
/// strings of their argument schemas. A cloud answer, an OpenAI-compatible
/// server's call id or a tool description copied from elsewhere may hold a
/// template's control markers (`<|im_start|>`); masked, they are tokenized as
/// text. Not masked: roles, `bos_token`/`eos_token`, numbers and booleans,
/// and the structure of argument schemas (types, property names, `enum`
/// values, `required`), which templates compare and iterate and which the
/// app itself declares.
///
/// Each distinct string gets one placeholder, so a template that compares
/// two fields (a call's id with a tool output's `tool_call_id`) sees them
/// equal exactly when they are. A placeholder is made of private-use
/// characters only: U+E000, three digits of the string's index in
/// U+E002...U+F8FF, random characters of that range, U+E001. Strings of 5 to
/// 64 characters get a placeholder of the same length, so a template that
/// checks a length (Mistral's nine-character call ids) renders as it would
/// with the real string; other strings get 13 characters. The empty string
/// stays empty (templates test `if message.content`).
///
/// One render's, on one thread: a class so that the closures that build the
/// template's variables can share it.
final class PromptMask {
  /// The real strings, by index.
  private(set) var values: [String] = []
  private var placeholders: [String] = []
  private var indexOfValue: [String: Int] = [:]
  private var indexOfPlaceholder: [String: Int] = [:]
  /// The filler's source: one random seed per mask, stepped by SplitMix64.
  private var filler = UInt64.random(in: 0...UInt64.max)

  static let start: Unicode.Scalar = "\u{E000}"
  static let end: Unicode.Scalar = "\u{E001}"
  /// The digits and filler: U+E002...U+F8FF.
  private static let digitBase: UInt32 = 0xE002
  private static let radix: UInt32 = 0xF8FF - 0xE002 + 1
  private static let indexDigits = 3
  private static let defaultLength = 13
  private static let preservedLengths = 5...64

  /// The placeholder of `value`; the same one for every equal string.
  func placeholder(for value: String) -> String {
    guard !value.isEmpty else { return "" }
    if let index = indexOfValue[value] { return placeholders[index] }
    let index = values.count
    var scalars = String.UnicodeScalarView()
    scalars.append(Self.start)
    var rest = UInt32(truncatingIfNeeded: index)
    for _ in 0..<Self.indexDigits {
      scalars.append(Self.digit(rest % Self.radix))
      rest /= Self.radix
    }
    let count = value.unicodeScalars.count
    let length = Self.preservedLengths.contains(count) ? count : Self.defaultLength
    for _ in 0..<(length - Self.indexDigits - 2) {
      scalars.append(Self.digit(UInt32(truncatingIfNeeded: nextFiller() % UInt64(Self.radix))))
    }
    scalars.append(Self.end)
    let placeholder = String(scalars)
    values.append(value)
    placeholders.append(placeholder)
    indexOfValue[value] = index
    indexOfPlaceholder[placeholder] = index
    return placeholder
  }

  /// The index of the string `placeholder` stands for, if it is one of this mask's.
  func index(of placeholder: String) -> Int? {
    indexOfPlaceholder[placeholder]
  }

  /// The longest placeholder, in scalars.
  static var longestPlaceholderScalars: Int { max(defaultLength, preservedLengths.upperBound) }

  /// SplitMix64: cheap, and random enough for filler that only has to be
  /// unlike a template's own text.
  private func nextFiller() -> UInt64 {
    filler &+= 0x9E37_79B9_7F4A_7C15
    var mixed = filler
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  private static func digit(_ value: UInt32) -> Unicode.Scalar {
    Unicode.Scalar(digitBase + value) ?? start
  }
}
