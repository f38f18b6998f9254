import HybridInferenceCore
import HybridInferenceJinja

/// Reading calls back out of an answer in a `ToolCallPattern`.
///
/// The pattern's text is matched loosely where it has spaces (any run of
/// spaces and newlines, or none, matches one), names and ids run to the text
/// that follows them, JSON arguments are one balanced object, and tagged
/// values run to their close. The closing text of the last call may be cut
/// by the end of the answer (a model stops at its end-of-turn token, which is
/// often the close). Text around the calls is the answer's text.
extension ToolCallPattern {
  /// The most calls read from one answer.
  static let maximumCalls = 4

  /// The calls in `text` (fresh ids) and the text outside them.
  /// - Throws: `generationFailed` when a call starts and does not parse.
  func read(_ text: String, tools: [ToolDeclaration]) throws(HybridInferenceError) -> (
    text: String, calls: [Part.FunctionCall]
  ) {
    var cursor = PatternCursor(text)
    var outside = ""
    var calls: [Part.FunctionCall] = []
    let trigger = self.trigger
    while calls.count < Self.maximumCalls {
      let found: Int?
      if startsAnswer {
        found =
          calls.isEmpty
          ? cursor.firstNonSpace(from: cursor.position).flatMap { cursor.starts(with: "{", at: $0) ? $0 : nil } : nil
      } else {
        found = cursor.find(trigger, from: cursor.position)
      }
      guard let found else { break }
      outside += cursor.text(cursor.position..<found)
      cursor.position = found
      guard cursor.match(sectionOpen, closing: false) else { throw ToolCallParser.malformed(text) }
      calls.append(try readCall(&cursor, tools: tools, source: text))
      while allowsSeveral, calls.count < Self.maximumCalls {
        let saved = cursor.position
        guard cursor.match(separator, closing: false), let call = try? readCall(&cursor, tools: tools, source: text)
        else {
          cursor.position = saved
          break
        }
        calls.append(call)
      }
      let saved = cursor.position
      if !cursor.match(sectionClose, closing: true) { cursor.position = saved }
    }
    outside += cursor.text(cursor.position..<cursor.count)
    return (calls.isEmpty ? text : outside.trimmingWhitespace, calls)
  }

  private func readCall(
    _ cursor: inout PatternCursor, tools: [ToolDeclaration], source: String
  ) throws(HybridInferenceError) -> Part.FunctionCall {
    var name = ""
    var arguments: OrderedJSON = .object([])
    for (index, piece) in call.enumerated() {
      let closing = call[(index + 1)...].allSatisfy { if case .text = $0 { true } else { false } }
      switch piece {
      case .text(let text):
        guard cursor.match(text, closing: closing) else { throw ToolCallParser.malformed(source) }
      case .name, .id:
        guard let read = cursor.read(until: stops(after: index)), !read.trimmingWhitespace.isEmpty else {
          throw ToolCallParser.malformed(source)
        }
        if piece == .name { name = read.trimmingWhitespace }
      case .index:
        cursor.skipSpaces()
        guard cursor.skipDigits() else { throw ToolCallParser.malformed(source) }
      case .arguments(.json):
        cursor.skipSpaces()
        // An object, or (as some models write them) a string holding one.
        let end =
          cursor.starts(with: "\"", at: cursor.position)
          ? ProbeText.closingQuote(cursor.scalars, from: cursor.position, limit: cursor.count)
          : cursor.starts(with: "{", at: cursor.position)
            ? ProbeText.closingBrace(cursor.scalars, from: cursor.position, limit: cursor.count) : nil
        guard let end, let value = try? JSONPrefixParser.parse(cursor.text(cursor.position..<end)) else {
          throw ToolCallParser.malformed(source)
        }
        cursor.position = end
        arguments = value
      case .arguments(.tagged(let tags)):
        let schema = tools.first { $0.name == name }.flatMap { try? $0.parameters.ordered() }
        arguments = try readTagged(&cursor, tags, schema: schema, source: source)
      }
    }
    guard !name.isEmpty else { throw ToolCallParser.malformed(source) }
    if let text = arguments.string { arguments = (try? JSONPrefixParser.parse(text)) ?? arguments }
    return Part.FunctionCall(id: ToolCallParser.newID(), name: name, args: arguments.jsonValue)
  }

  /// Tagged arguments, each value a string where the tag or the tool's schema says so, else JSON.
  private func readTagged(
    _ cursor: inout PatternCursor, _ tags: TaggedArguments, schema: OrderedJSON?, source: String
  ) throws(HybridInferenceError) -> OrderedJSON {
    var members: [(String, OrderedJSON)] = []
    let keyStops = [tags.keyCloseForString, tags.keyCloseForOther].map(Self.firstWord)
    while members.count < 256 {
      let saved = cursor.position
      guard cursor.match(tags.open, closing: false),
        let key = cursor.read(until: keyStops)
      else {
        cursor.position = saved
        break
      }
      let markedString: Bool
      if cursor.match(tags.keyCloseForString, closing: false) {
        markedString = tags.keyCloseForString != tags.keyCloseForOther
      } else if cursor.match(tags.keyCloseForOther, closing: false) {
        markedString = false
      } else {
        throw ToolCallParser.malformed(source)
      }
      guard var value = cursor.read(until: [Self.firstWord(tags.valueClose)]) else {
        throw ToolCallParser.malformed(source)
      }
      if tags.valueClose.first?.isWhitespace == true, value.last?.isNewline == true { value.removeLast() }
      guard cursor.match(tags.valueClose, closing: true) else { throw ToolCallParser.malformed(source) }
      let name = key.trimmingWhitespace
      let type = schema?["properties"]?[name]?["type"]?.string
      let isString = type == "string" || (type == nil && markedString)
      members.append((name, isString ? .string(value) : Self.decoded(value)))
    }
    return .object(members)
  }

  /// A tagged value that is not a string: JSON, or the Python spelling a
  /// template's `string` filter gives (`True`, `None`); else the text itself.
  static func decoded(_ text: String) -> OrderedJSON {
    let trimmed = text.trimmingWhitespace
    switch trimmed {
    case "True": return .bool(true)
    case "False": return .bool(false)
    case "None": return .null
    default: return (try? JSONPrefixParser.parse(trimmed)) ?? .string(text)
    }
  }

  /// Where the variable piece at `index` ends: at the text the pattern has next.
  private func stops(after index: Int) -> [String] {
    let next = index + 1 < call.count ? call[index + 1] : .text(allowsSeveral ? separator : sectionClose)
    switch next {
    case .text(let text): return [Self.firstWord(text)]
    case .arguments(.json): return ["{", "\""]
    case .arguments(.tagged(let tags)): return [Self.firstWord(tags.open)] + stops(after: index + 1)
    case .name, .id, .index: return [""]
    }
  }

  /// The first run of `text` without spaces: what a variable piece is read
  /// up to (the rest may be written with other spacing).
  static func firstWord(_ text: String) -> String {
    String(text.drop { PatternCursor.isSpace($0.unicodeScalars.first ?? " ") }.prefix { !$0.isWhitespace })
  }

  /// The text a call of `name` with `arguments` is written as (the probe's
  /// check that a pattern describes its template; tagged values as a
  /// template's `string` filter writes them).
  func written(name: String, id: String, arguments: [(String, OrderedJSON)], json: String) -> String {
    var text = ""
    for piece in call {
      switch piece {
      case .text(let literal): text += literal
      case .name: text += name
      case .id: text += id
      case .index(let base): text += String(base)
      case .arguments(.json): text += json
      case .arguments(.tagged(let tags)):
        for (key, value) in arguments {
          let close = value.string == nil ? tags.keyCloseForOther : tags.keyCloseForString
          text += tags.open + key + close + (value.string ?? value.jsonText) + tags.valueClose
        }
      }
    }
    return text
  }

  /// Whether the pattern writes the probe call exactly as the template did.
  func writes(_ probe: ProbeText) -> Bool {
    guard let call = probe.call(at: 0) else { return false }
    let json = ProbeText.string(probe.scalars[call.argumentsStart..<call.end])
    let arguments: [(String, OrderedJSON)] = [
      (Probe.stringKey, .string(Probe.stringValue)), (Probe.numberKey, .number(Double(Probe.numberValue))),
    ]
    let one = written(name: Probe.name, id: String(Character(ProbeText.idMark)), arguments: arguments, json: json)
    return sectionOpen + one + sectionClose == probe.text
  }
}
