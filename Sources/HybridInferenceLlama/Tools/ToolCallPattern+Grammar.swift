import HybridInferenceCore

/// The GBNF grammar of calls in a `ToolCallPattern`, built from the offered
/// tools: the name is one of theirs and the arguments follow that tool's
/// schema, as JSON (`SchemaGrammar`) or tagged one by one (a string value as
/// text without its close tag's first character, any other value as JSON).
///
/// Spaces in the pattern's text are optional, as `read` matches them
/// loosely; the text after the last call (its close, the section's close) is
/// optional too, so the grammar is complete once the last argument is, and a
/// model may end its turn there (gpt-oss's `<|call|>` is its end-of-turn token).
extension ToolCallPattern {
  func gbnf(for tools: [ToolDeclaration]) throws(HybridInferenceError) -> String {
    guard !tools.isEmpty else { throw .unsupportedRequest("no tool to call") }
    var rules: [(String, String)] = []
    var names: Set<String> = []
    func add(_ rule: (String, String)) {
      if names.insert(rule.0).inserted { rules.append(rule) }
    }
    let lastVariable = call.lastIndex { if case .text = $0 { false } else { true } } ?? 0
    var bodies: [String] = []
    for (index, tool) in tools.enumerated() {
      var sequence: [String] = []
      for piece in call[...lastVariable] {
        switch piece {
        case .text(let text): sequence.append(Self.loose(text))
        case .name: sequence.append(SchemaGrammar.literal(tool.name))
        case .id: sequence.append("[A-Za-z0-9]{9}")
        case .index: sequence.append("[0-9]{1,2}")
        case .arguments(.json):
          let (expression, own) = try SchemaGrammar.rules(for: tool.parameters, prefix: "t\(index)-")
          own.forEach(add)
          sequence.append(expression)
        case .arguments(.tagged(let tags)):
          let (properties, own) = try SchemaGrammar.propertyRules(for: tool.parameters, prefix: "t\(index)-")
          own.forEach(add)
          for property in properties {
            let value = property.isString ? Self.taggedText(until: tags.valueClose) : property.expression
            let close = property.isString ? tags.keyCloseForString : tags.keyCloseForOther
            let pair = [
              Self.loose(tags.open), SchemaGrammar.literal(property.name), Self.loose(close), value,
              Self.loose(tags.valueClose),
            ].joined(separator: " ")
            sequence.append(property.isRequired ? "(\(pair))" : "(\(pair))?")
          }
        }
      }
      let rule = "t\(index)-call"
      add((rule, sequence.joined(separator: " ")))
      bodies.append(rule)
    }
    let close = call[(lastVariable + 1)...].compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
    add(("call", bodies.joined(separator: " | ")))
    let more = allowsSeveral ? " (\(Self.loose(close)) \(Self.loose(separator)) call){0,\(Self.maximumCalls - 1)}" : ""
    let root = "\(Self.loose(sectionOpen)) call\(more) (\(Self.loose(close + sectionClose)))?"
    return ([("root", root)] + rules).map { "\($0.0) ::= \($0.1)" }.joined(separator: "\n") + "\n"
  }

  /// `text` as GBNF, each run of spaces optional.
  static func loose(_ text: String) -> String {
    var parts: [String] = []
    var run = ""
    var runIsSpace = false
    for character in text {
      let isSpace = character == " " || character == "\n" || character == "\t" || character == "\r"
      if !run.isEmpty, isSpace != runIsSpace {
        parts.append(runIsSpace ? "(\(SchemaGrammar.literal(run)))?" : SchemaGrammar.literal(run))
        run = ""
      }
      run.append(character)
      runIsSpace = isSpace
    }
    if !run.isEmpty { parts.append(runIsSpace ? "(\(SchemaGrammar.literal(run)))?" : SchemaGrammar.literal(run)) }
    return parts.isEmpty ? #""""# : parts.joined(separator: " ")
  }

  /// A tagged string value as the device writes it: up to
  /// `SchemaGrammar.defaultMaximumLength` characters without the first
  /// character of its close (so the close ends it, and a model that loops
  /// cannot fill the window with one value). `read` takes any text up to
  /// the close, so this only narrows what the device writes.
  static func taggedText(until close: String) -> String {
    let stop = close.trimmingWhitespace.unicodeScalars.first ?? "<"
    return "[^\\x00\(classEscaped(stop))]{0,\(SchemaGrammar.defaultMaximumLength)}"
  }

  private static func classEscaped(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case "]", "\\", "^", "-", "[": "\\" + String(Character(scalar))
    case "\n": "\\n"
    case "\t": "\\t"
    case "\r": "\\r"
    default: String(Character(scalar))
    }
  }
}
