import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: the JSON prefix parser (issue 19, point 6), which
/// reads every delta of a model's structured answer and every schema text.
///
/// The input is parsed as a complete document and, cut at three places, as
/// the beginning of one. A syntax error is the expected outcome of garbage;
/// a trap, an ASan report, a leak or a timeout is a finding, and so are two
/// properties the streaming path relies on: a document that parses whole
/// gives the same value read as a prefix, and the value of a prefix is
/// itself a complete document. The same text is also read as a model's
/// answer in two call patterns (JSON in a marker, tagged arguments), the
/// reader that takes a call back out of an answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONPrefix(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  if let whole = try? JSONPrefixParser.parse(text) {
    guard let prefix = try? JSONPrefixParser.parsePrefix(text), prefix == whole else {
      fatalError("a complete document reads differently as a prefix")
    }
  }
  let utf8 = Array(text.utf8)
  for cut in Set([utf8.count / 3, utf8.count / 2, max(0, utf8.count - 1)]) {
    let prefix = String(decoding: utf8[..<cut], as: UTF8.self)
    guard let value = try? JSONPrefixParser.parsePrefix(prefix) else { continue }
    guard (try? JSONPrefixParser.parse(value.jsonText)) != nil else {
      fatalError("the value of a prefix is not a document: \(value.jsonText.prefix(200))")
    }
  }
  let tagged = ToolCallPattern.TaggedArguments(
    open: "<arg_key>", keyCloseForString: "</arg_key><arg_value>", keyCloseForOther: "</arg_key><arg_value>",
    valueClose: "</arg_value>")
  for pattern in [
    ToolCallPattern(
      sectionOpen: "[",
      call: [.text("{\"name\": \""), .name, .text("\", \"arguments\": "), .arguments(.json), .text("}")],
      separator: ", ", sectionClose: "]", allowsSeveral: true),
    ToolCallPattern(
      sectionOpen: "", call: [.text("<tool_call>"), .name, .arguments(.tagged(tagged)), .text("</tool_call>")],
      separator: "", sectionClose: "", allowsSeveral: true),
  ] {
    _ = try? pattern.read(text, tools: [])
  }
  return 0
}
