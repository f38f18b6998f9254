import Foundation
import HybridInferenceCore

/// The calls a template printed for the probe conversation, as Unicode
/// scalars (so no comparison cuts a character in two), with every probe id
/// replaced by one mark (`idMark`); `ToolCallPattern.derive` reads the
/// pattern from it.
struct ProbeText {
  /// Stands for a call's id (a private-use scalar no template prints).
  static let idMark: Unicode.Scalar = "\u{E000}"
  /// `indexMark + n` stands for a call's position counted from `n` (0-9).
  static let indexMark: UInt32 = 0xE100

  let scalars: [Unicode.Scalar]

  init(_ region: [Unicode.Scalar], ids: [String]) {
    var text = String(String.UnicodeScalarView(region))
    for id in ids { text = text.replacingOccurrences(of: id, with: String(Character(Self.idMark))) }
    scalars = Array(text.unicodeScalars)
  }

  var text: String { Self.string(scalars[...]) }

  /// Where `word` occurs, without overlaps.
  func occurrences(of word: String, from start: Int = 0, to limit: Int? = nil) -> [Range<Int>] {
    let needle = Array(word.unicodeScalars)
    let end = min(limit ?? scalars.count, scalars.count)
    var found: [Range<Int>] = []
    var index = start
    while let next = PatternCursor.find(needle, in: scalars, from: index, to: end) {
      found.append(next..<(next + needle.count))
      index = next + needle.count
    }
    return found
  }

  /// One probe call: where its name is, where its arguments start and end, and how they are written.
  struct Call {
    let name: Range<Int>
    let argumentsStart: Int
    let end: Int
    let arguments: ToolCallPattern.Arguments
  }

  /// The `index`th call, when its arguments can be told apart.
  func call(at index: Int) -> Call? {
    let names = occurrences(of: ToolCallPattern.Probe.name)
    guard index < names.count else { return nil }
    let name = names[index]
    let limit = index + 1 < names.count ? names[index + 1].lowerBound : scalars.count
    let probe = ToolCallPattern.Probe.self
    guard let key = occurrences(of: probe.stringKey, from: name.upperBound, to: limit).first else { return nil }
    if let brace = scalars[name.upperBound..<key.lowerBound].lastIndex(of: "{"),
      let close = Self.closingBrace(scalars, from: brace, limit: limit),
      case .object(let members)? = try? JSONPrefixParser.parse(Self.string(scalars[brace..<close])),
      members.map(\.0) == [probe.stringKey, probe.numberKey]
    {
      return Call(name: name, argumentsStart: brace, end: close, arguments: .json)
    }
    return taggedCall(name: name, key: key, limit: limit)
  }

  private func taggedCall(name: Range<Int>, key: Range<Int>, limit: Int) -> Call? {
    let probe = ToolCallPattern.Probe.self
    guard let value = occurrences(of: probe.stringValue, from: key.upperBound, to: limit).first,
      let key2 = occurrences(of: probe.numberKey, from: value.upperBound, to: limit).first,
      let value2 = occurrences(of: String(probe.numberValue), from: key2.upperBound, to: limit).first
    else { return nil }
    let beforeKey = Array(scalars[name.upperBound..<key.lowerBound])
    let between = Array(scalars[value.upperBound..<key2.lowerBound])
    let open = Self.startingAtTag(Self.commonSuffix(beforeKey, between))
    let valueClose = Array(between.dropLast(open.count))
    let tail = scalars[value2.upperBound..<limit]
    let keyCloses = [
      Self.string(scalars[key.upperBound..<value.lowerBound]),
      Self.string(scalars[key2.upperBound..<value2.lowerBound]),
    ]
    let closeText = Self.string(valueClose[...])
    guard !open.isEmpty || !valueClose.isEmpty, tail.starts(with: valueClose),
      !(keyCloses + [closeText]).contains(where: { $0.contains(probe.stringKey) || $0.contains(probe.numberKey) }),
      !keyCloses[0].isEmpty, !closeText.trimmingWhitespace.isEmpty
    else { return nil }
    let tagged = ToolCallPattern.TaggedArguments(
      open: Self.string(open[...]), keyCloseForString: keyCloses[0], keyCloseForOther: keyCloses[1],
      valueClose: closeText)
    return Call(
      name: name, argumentsStart: key.lowerBound - open.count, end: value2.upperBound + valueClose.count,
      arguments: .tagged(tagged))
  }

  /// The end (after the `}`) of the JSON object whose `{` is at `start`.
  static func closingBrace(_ text: [Unicode.Scalar], from start: Int, limit: Int) -> Int? {
    var depth = 0
    var inString = false
    var escaped = false
    for index in start..<min(limit, text.count) {
      let scalar = text[index]
      if inString {
        if escaped {
          escaped = false
        } else if scalar == "\\" {
          escaped = true
        } else if scalar == "\"" {
          inString = false
        }
        continue
      }
      switch scalar {
      case "\"": inString = true
      case "{", "[": depth += 1
      case "}", "]":
        depth -= 1
        if depth == 0 { return index + 1 }
      default: break
      }
    }
    return nil
  }

  /// The end (after the closing `"`) of the JSON string whose `"` is at `start`.
  static func closingQuote(_ text: [Unicode.Scalar], from start: Int, limit: Int) -> Int? {
    var escaped = false
    for index in (start + 1)..<max(start + 1, min(limit, text.count)) {
      if escaped {
        escaped = false
      } else if text[index] == "\\" {
        escaped = true
      } else if text[index] == "\"" {
        return index + 1
      }
    }
    return nil
  }

  /// Whether `a` in call one and `b` in call two are the same piece: equal,
  /// or the digits of the calls' positions (`0` then `1`).
  private static func merged(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Unicode.Scalar? {
    if a == b { return a }
    guard let digit = Int(String(a)), digit < 9, Int(String(b)) == digit + 1 else { return nil }
    return Unicode.Scalar(indexMark + UInt32(digit))
  }

  /// The longest common end of `a` (call one's) and `b` (call two's).
  static func commonSuffix(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> [Unicode.Scalar] {
    var result: [Unicode.Scalar] = []
    while result.count < min(a.count, b.count),
      let scalar = merged(a[a.count - 1 - result.count], b[b.count - 1 - result.count])
    {
      result.append(scalar)
    }
    return result.reversed()
  }

  /// The longest common start of `a` (call one's) and `b` (call two's).
  static func commonPrefix(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> [Unicode.Scalar] {
    var result: [Unicode.Scalar] = []
    while result.count < min(a.count, b.count), let scalar = merged(a[result.count], b[result.count]) {
      result.append(scalar)
    }
    return result
  }

  /// `text` without a leading piece of a tag (`|><|tool_call_begin|>` starts at `<|tool_call_begin|>`).
  static func startingAtTag(_ text: [Unicode.Scalar]) -> [Unicode.Scalar] {
    guard let close = text.firstIndex(where: { $0 == ">" || $0 == "]" }),
      !text[..<close].contains(where: { $0 == "<" || $0 == "[" })
    else { return text }
    return Array(text[(close + 1)...])
  }

  /// `text` without a trailing piece of a tag (`<|tool_call_end|><|tool_call` ends at `<|tool_call_end|>`).
  static func endingAtTag(_ text: [Unicode.Scalar]) -> [Unicode.Scalar] {
    guard let open = text.lastIndex(where: { $0 == "<" || $0 == "[" }),
      !text[open...].contains(where: { $0 == ">" || $0 == "]" })
    else { return text }
    return Array(text[..<open])
  }

  /// Text with marks, as pattern pieces.
  static func pieces(_ text: [Unicode.Scalar]) -> [ToolCallPattern.Piece] {
    var pieces: [ToolCallPattern.Piece] = []
    var run: [Unicode.Scalar] = []
    for scalar in text {
      let piece: ToolCallPattern.Piece? =
        scalar == idMark
        ? .id
        : (indexMark..<(indexMark + 10)).contains(scalar.value) ? .index(base: Int(scalar.value - indexMark)) : nil
      guard let piece else {
        run.append(scalar)
        continue
      }
      if !run.isEmpty { pieces.append(.text(string(run[...]))) }
      run = []
      pieces.append(piece)
    }
    if !run.isEmpty { pieces.append(.text(string(run[...]))) }
    return pieces
  }

  static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
    String(String.UnicodeScalarView(scalars))
  }
}
