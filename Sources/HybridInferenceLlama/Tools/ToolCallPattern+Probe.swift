import HybridInferenceCore
import HybridInferenceJinja

/// Reading a template's call syntax from what it prints.
///
/// The template renders three conversations that differ only in the
/// assistant's last turn: no call, one call of a probe tool, two calls. What
/// the one-call render adds to the no-call one is the call as the model
/// writes it; the two-call render shows which part repeats per call and
/// which part wraps them all. Texts whose names, ids and values are unlikely
/// in any template (`Probe`) mark where the variable pieces are. A pattern is
/// only returned when it writes the one-call text back exactly; a template
/// it cannot describe (Python-style calls, keys that are tag names) gets
/// none, and the device uses the generic format.
extension ToolCallPattern {
  /// The probe's names and values.
  enum Probe {
    static let name = "probe_tool_zq"
    static let stringKey = "first_key_zq"
    static let stringValue = "alpha_value_zq"
    static let numberKey = "second_key_zq"
    static let numberValue = 4729
    /// The ids the probe calls carry: nine letters, as Mistral's templates
    /// require; or Kimi K2's `functions.<name>:<index>`, which its templates
    /// print in place of the name.
    static let idStyles = [["zqcallaaa", "zqcallbbb"], ["functions.\(name):0", "functions.\(name):1"]]

    static var tool: ToolDeclaration {
      let schema =
        #"{"type":"object","properties":{"first_key_zq":{"type":"string"},"second_key_zq":{"type":"integer"}},"#
        + #""required":["first_key_zq","second_key_zq"]}"#
      return ToolDeclaration(
        name: name, description: "probe",
        parameters: (try? GenerationSchema(jsonSchema: schema)) ?? GenerationSchema(deriving: String.self))
    }

    static func call(_ index: Int, ids: [String]) -> Part.FunctionCall {
      Part.FunctionCall(
        id: ids[index], name: name,
        args: .object([stringKey: .string(stringValue), numberKey: .number(Double(numberValue))]))
    }

    static func conversation(calls: Int, ids: [String]) -> [ChatTemplate.Message] {
      [
        ChatTemplate.Message(role: "user", content: "Hi"),
        ChatTemplate.Message(role: "assistant", content: "", toolCalls: (0..<calls).map { call($0, ids: ids) }),
      ]
    }
  }

  /// The pattern of the template that `render` runs, or nil when it renders
  /// no call, or none this type can describe.
  static func derive(render: ([ChatTemplate.Message]) throws(JinjaError) -> String) -> ToolCallPattern? {
    for (style, ids) in Probe.idStyles.enumerated() {
      guard let none = try? render(Probe.conversation(calls: 0, ids: ids)),
        let one = try? render(Probe.conversation(calls: 1, ids: ids))
      else { return nil }
      // Ids that hold the name are text like any other, not marks.
      let marked = style == 0 ? ids : []
      let single = ProbeText(callRegion(of: one, besides: none), ids: marked)
      guard single.occurrences(of: Probe.name).count == 1 else { continue }
      let double = (try? render(Probe.conversation(calls: 2, ids: ids))).map {
        ProbeText(callRegion(of: $0, besides: none), ids: marked)
      }
      guard var pattern = derive(single: single, double: double), pattern.writes(single) else { continue }
      pattern.startAtLastTag()
      return pattern
    }
    return nil
  }

  private static func derive(single: ProbeText, double: ProbeText?) -> ToolCallPattern? {
    guard let first = single.call(at: 0) else { return nil }
    let pattern: ToolCallPattern
    if let double, double.occurrences(of: Probe.name).count == 2, let a = double.call(at: 0),
      let b = double.call(at: 1), a.arguments == first.arguments
    {
      let text = double.scalars
      var open = ProbeText.commonSuffix(Array(text[..<a.name.lowerBound]), Array(text[a.end..<b.name.lowerBound]))
      open = ProbeText.startingAtTag(open)
      let afterFirst = Array(text[a.end..<(b.name.lowerBound - open.count)])
      var close = ProbeText.commonPrefix(afterFirst, Array(text[b.end...]))
      close = ProbeText.endingAtTag(close)
      let middle = ProbeText.commonPrefix(
        Array(text[a.name.upperBound..<a.argumentsStart]), Array(text[b.name.upperBound..<b.argumentsStart]))
      guard middle.count == a.argumentsStart - a.name.upperBound else { return nil }
      pattern = ToolCallPattern(
        sectionOpen: String(ProbeText.string(text[..<(a.name.lowerBound - open.count)])),
        call: ProbeText.pieces(open) + [.name] + ProbeText.pieces(middle) + [.arguments(a.arguments)]
          + ProbeText.pieces(close),
        separator: ProbeText.string(afterFirst.dropFirst(close.count)),
        sectionClose: ProbeText.string(text[(b.end + close.count)...]), allowsSeveral: true)
    } else {
      let text = single.scalars
      pattern = ToolCallPattern(
        sectionOpen: "",
        call: ProbeText.pieces(Array(text[..<first.name.lowerBound])) + [.name]
          + ProbeText.pieces(Array(text[first.name.upperBound..<first.argumentsStart]))
          + [.arguments(first.arguments)] + ProbeText.pieces(Array(text[first.end...])),
        separator: "", sectionClose: "", allowsSeveral: false)
    }
    return pattern
  }

  /// A section that starts with other text (an empty thinking block the
  /// template writes before Command R7B's actions) starts at its last tag:
  /// the thought splitter reads the block, and the calls start there.
  private mutating func startAtLastTag() {
    sectionOpen = sectionOpen.trimmingWhitespace
    if sectionOpen.isEmpty, case .text(let text)? = call.first {
      call[0] = .text(String(text.drop { $0.isWhitespace }))
      return
    }
    var start = sectionOpen.startIndex
    var index = sectionOpen.startIndex
    while index < sectionOpen.endIndex {
      let rest = sectionOpen[index...]
      if let tag = Self.firstTag(of: String(rest)), rest.hasPrefix(tag) {
        start = index
        index = sectionOpen.index(index, offsetBy: tag.count)
      } else {
        index = sectionOpen.index(after: index)
      }
    }
    sectionOpen = String(sectionOpen[start...])
  }

  /// What `one` adds to `none`: the first and last characters that differ,
  /// widened to whole tags (`<|tool_call|>` is not cut to `tool_call|>`
  /// because the turn without a call has a `<` at the same place).
  static func callRegion(of one: String, besides none: String) -> [Unicode.Scalar] {
    let a = Array(one.unicodeScalars)
    let c = Array(none.unicodeScalars)
    var start = 0
    while start < min(a.count, c.count), a[start] == c[start] { start += 1 }
    var suffix = 0
    while suffix < min(a.count, c.count) - start, a[a.count - 1 - suffix] == c[c.count - 1 - suffix] { suffix += 1 }
    var end = a.count - suffix
    // A tag opened before the start and not closed by it: the call begins there.
    if let open = a[..<start].lastIndex(where: { $0 == "<" || $0 == "[" }),
      !a[open..<start].contains(where: { $0 == ">" || $0 == "]" })
    {
      start = open
    }
    // A tag opened in the region and closed after its end: the call's own
    // (extend to its close), or the turn's end that the call-free text has
    // too (stop before it).
    if end > start, let open = a[start..<end].lastIndex(where: { $0 == "<" || $0 == "[" }),
      !a[open..<end].contains(where: { $0 == ">" || $0 == "]" })
    {
      let shared = c.count - suffix
      let noneOpen = c[..<shared].lastIndex(where: { $0 == "<" || $0 == "[" })
      if let noneOpen, c[noneOpen..<shared].elementsEqual(a[open..<end]) {
        end = open
      } else if let close = a[end...].firstIndex(where: { $0 == ">" || $0 == "]" }) {
        end = close + 1
      }
    }
    return end > start ? Array(a[start..<end]) : []
  }
}
