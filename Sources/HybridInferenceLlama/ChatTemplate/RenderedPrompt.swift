import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// A rendered prompt that remembers which text came from where.
///
/// Only the template's own markup may become control tokens (`<|im_start|>`);
/// every string the conversation brought (bodies, tool call ids, names and
/// arguments, tool descriptions: `PromptMask`) is text, whatever markers it
/// contains. Keeping them apart until tokenization is what stops a message,
/// a call id or an argument from forging a turn.
struct RenderedPrompt: Equatable, Sendable {
  enum Segment: Equatable, Sendable {
    /// The template's own text: tokenized with control tokens parsed.
    case markup(String)
    /// A string of the conversation: tokenized as plain text.
    case text(String)
  }

  var segments: [Segment]

  /// The whole prompt as one string, as a model would read it.
  var text: String {
    segments.map { segment in
      switch segment {
      case .markup(let text), .text(let text): text
      }
    }.joined()
  }

  init(segments: [Segment]) {
    self.segments = segments
  }

  /// Splits `real`, a template's output for the conversation, where
  /// `marked`, its output for the same conversation under `mask`, holds a
  /// placeholder. Each placeholder's place in `real` holds its string as the
  /// template printed it: as given, stripped of surrounding whitespace
  /// (`trim`, `strip()`, `lstrip()`, `rstrip()`), or escaped inside a JSON
  /// string (`tojson`). Everything else must be byte for byte the same in
  /// both, so markup is only ever text the template wrote for both renders
  /// alike, never a string's (a template that rewrote a string some other
  /// way gives nil).
  init?(real: String, marked: String, mask: PromptMask) {
    let pieces = Self.pieces(of: Array(marked.utf8), mask: mask)
    let forms = PrintedForms(mask.values)
    guard let segments = PromptMatcher(real: Array(real.utf8), pieces: pieces, forms: forms).segments()
    else { return nil }
    self.segments = segments
  }

  /// `marked` cut into literal text and placeholders, as printed or as
  /// `tojson(ensure_ascii=True)` writes them (`\ue000...`).
  private static func pieces(of marked: [UInt8], mask: PromptMask) -> [PromptMatcher.Piece] {
    var pieces: [PromptMatcher.Piece] = []
    var literalStart = 0
    var index = 0
    while index < marked.count {
      // Only U+E000's first byte or a backslash can open one: skip the rest fast.
      let byte = marked[index]
      guard byte == 0xEE || byte == 0x5C, let (value, end) = placeholder(in: marked, at: index, mask: mask) else {
        index += 1
        continue
      }
      if index > literalStart { pieces.append(.literal(Array(marked[literalStart..<index]))) }
      pieces.append(.value(value.index, asciiEscaped: value.asciiEscaped))
      index = end
      literalStart = index
    }
    if literalStart < marked.count { pieces.append(.literal(Array(marked[literalStart...]))) }
    return pieces
  }

  /// U+E000 and U+E001, which open and close a placeholder: in UTF-8 (three
  /// bytes a scalar), and as `ensure_ascii` writes them (six).
  private static let delimiters: [(asciiEscaped: Bool, start: [UInt8], end: [UInt8])] = [
    (false, Array("\u{E000}".utf8), Array("\u{E001}".utf8)),
    (true, Array(#"\ue000"#.utf8), Array(#"\ue001"#.utf8)),
  ]

  /// The placeholder that starts at `index`, if one of `mask`'s does, and where it ends.
  private static func placeholder(
    in marked: [UInt8], at index: Int, mask: PromptMask
  ) -> (value: (index: Int, asciiEscaped: Bool), end: Int)? {
    for (asciiEscaped, start, end) in delimiters {
      guard marked[index] == start[0], index + start.count <= marked.count,
        marked[index..<index + start.count].elementsEqual(start)
      else { continue }
      let limit = min(marked.count, index + PromptMask.longestPlaceholderScalars * start.count)
      var close = index + start.count
      while close + end.count <= limit, !marked[close..<close + end.count].elementsEqual(end) { close += start.count }
      guard close + end.count <= limit else { return nil }
      let text = String(decoding: marked[index..<close + end.count], as: UTF8.self)
      let placeholder = asciiEscaped ? Self.unescapedASCII(text) : text
      guard let placeholder, let value = mask.index(of: placeholder) else { return nil }
      return ((value, asciiEscaped), close + end.count)
    }
    return nil
  }

  /// `\uXXXX` sequences back to their scalars (nil for anything else).
  private static func unescapedASCII(_ text: String) -> String? {
    var scalars = String.UnicodeScalarView()
    for unit in text.split(separator: "\\", omittingEmptySubsequences: true) {
      guard unit.count == 5, unit.first == "u", let value = UInt32(unit.dropFirst(), radix: 16),
        let scalar = Unicode.Scalar(value)
      else { return nil }
      scalars.append(scalar)
    }
    return String(scalars)
  }

  /// The ways a template prints a string: as given, stripped, JSON-escaped;
  /// or, for a placeholder `tojson(ensure_ascii=True)` wrote, escaped so.
  fileprivate static func printedForms(_ value: String, asciiEscaped: Bool) -> [[UInt8]] {
    func escaped(asciiOnly: Bool) -> String {
      var quoted = ""
      JSONStringLiteral.append(value, to: &quoted, asciiOnly: asciiOnly)
      return String(quoted.dropFirst().dropLast())
    }
    if asciiEscaped { return [Array(escaped(asciiOnly: true).utf8)] }
    let forms = [
      value,
      JinjaMethods.strip(value, nil, leading: true, trailing: true),
      JinjaMethods.strip(value, nil, leading: true, trailing: false),
      JinjaMethods.strip(value, nil, leading: false, trailing: true),
      escaped(asciiOnly: false),
    ]
    var unique: [[UInt8]] = []
    for form in forms.map({ Array($0.utf8) }) where !unique.contains(form) { unique.append(form) }
    return unique
  }
}

/// Lines a marked render up with the real one: a search over which printed
/// form each placeholder took, backtracking when a later piece does not fit.
/// A form is almost always decided by the literal text that follows it; the
/// search is bounded all the same (`stepLimit`), and gives up rather than guess.
private struct PromptMatcher {
  enum Piece {
    case literal([UInt8])
    /// A masked string, by index; `asciiEscaped` when `tojson(ensure_ascii=True)` wrote it.
    case value(Int, asciiEscaped: Bool)
  }

  let real: [UInt8]
  let pieces: [Piece]
  let forms: PrintedForms

  private var stepLimit: Int { 64 + 8 * pieces.count }

  /// The segments, or nil when `real` is not the marked render with each
  /// placeholder replaced by one of its string's forms.
  func segments() -> [RenderedPrompt.Segment]? {
    // The form chosen for each piece so far (-1 for a literal) and where it began.
    var chosen: [(form: Int, offset: Int)] = []
    var offset = 0
    var nextForm = 0
    var steps = 0
    while chosen.count < pieces.count || offset != real.count {
      steps += 1
      guard steps <= stepLimit else { return nil }
      var advanced = false
      if chosen.count < pieces.count {
        switch pieces[chosen.count] {
        case .literal(let bytes) where nextForm == 0 && matches(bytes, at: offset):
          chosen.append((-1, offset))
          offset += bytes.count
          advanced = true
        case .literal:
          break
        case .value(let value, let asciiEscaped):
          var form = nextForm
          while let bytes = forms.form(form, of: value, asciiEscaped: asciiEscaped) {
            if matches(bytes, at: offset) {
              chosen.append((form, offset))
              offset += bytes.count
              advanced = true
              break
            }
            form += 1
          }
        }
      }
      if advanced {
        nextForm = 0
        continue
      }
      // Back to the latest placeholder that has another form to try.
      while let last = chosen.last, last.form < 0 { chosen.removeLast() }
      guard let last = chosen.popLast() else { return nil }
      offset = last.offset
      nextForm = last.form + 1
    }
    return build(chosen.map(\.form))
  }

  private func matches(_ bytes: [UInt8], at offset: Int) -> Bool {
    guard offset + bytes.count <= real.count else { return false }
    return real.withUnsafeBytes { real in
      bytes.withUnsafeBytes { bytes in
        guard let base = real.baseAddress, let other = bytes.baseAddress else { return true }
        return memcmp(base + offset, other, bytes.count) == 0
      }
    }
  }

  private func build(_ chosen: [Int]) -> [RenderedPrompt.Segment] {
    var segments: [RenderedPrompt.Segment] = []
    var markup: [UInt8] = []
    for (piece, form) in zip(pieces, chosen) {
      switch piece {
      case .literal(let bytes):
        markup += bytes
      case .value(let value, let asciiEscaped):
        let text = forms.form(form, of: value, asciiEscaped: asciiEscaped) ?? []
        guard !text.isEmpty else { continue }
        if !markup.isEmpty { segments.append(.markup(String(decoding: markup, as: UTF8.self))) }
        markup = []
        segments.append(.text(String(decoding: text, as: UTF8.self)))
      }
    }
    if !markup.isEmpty { segments.append(.markup(String(decoding: markup, as: UTF8.self))) }
    return segments
  }
}

/// Each masked string's printed forms (`RenderedPrompt.printedForms`),
/// made when the search first asks past the string as given, which almost
/// always matches: most strings never pay for the others.
///
/// A class so that the search can fill it as it goes; one render's, on one thread.
private final class PrintedForms {
  private let values: [String]
  private var printed: [Int: [[UInt8]]] = [:]
  private var escaped: [Int: [[UInt8]]] = [:]

  init(_ values: [String]) {
    self.values = values
  }

  /// Form `index` of string `value`; nil past its last form.
  func form(_ index: Int, of value: Int, asciiEscaped: Bool) -> [UInt8]? {
    if index == 0, !asciiEscaped { return Array(values[value].utf8) }
    let forms: [[UInt8]]
    if asciiEscaped {
      forms = escaped[value] ?? RenderedPrompt.printedForms(values[value], asciiEscaped: true)
      escaped[value] = forms
    } else {
      forms = printed[value] ?? RenderedPrompt.printedForms(values[value], asciiEscaped: false)
      printed[value] = forms
    }
    return index < forms.count ? forms[index] : nil
  }
}
