import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: a JSON Schema to the grammar that constrains local
/// decoding (issue 19, point 6). A schema is input: an app may take it from
/// a server or a user, and a tool's parameters come from its declaration.
///
/// The input is parsed as `GenerationSchema(jsonSchema:)`; a schema that
/// parses becomes GBNF (`SchemaGrammar.gbnf`) and, as a tool's parameters,
/// a tool-call grammar in the generic format and three template patterns. A typed error is the
/// expected outcome of garbage; a trap, an ASan report, a leak or a timeout
/// is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  guard let schema = try? GenerationSchema(jsonSchema: text) else { return 0 }
  _ = try? SchemaGrammar.gbnf(for: schema)
  _ = try? schema.jsonSchemaText()
  let tool = ToolDeclaration(name: "fuzz_tool", description: "A tool.", parameters: schema)
  for syntax in [ToolCallSyntax.generic] + fuzzPatterns.map { ToolCallSyntax(pattern: $0) } {
    _ = try? ToolCallGrammar.gbnf(for: [tool], syntax: syntax)
  }
  return 0
}

/// Call patterns of three shapes (JSON in markers, name then JSON with an
/// id, tagged arguments), as templates print them.
let fuzzPatterns: [ToolCallPattern] = [
  ToolCallPattern(
    sectionOpen: "",
    call: [
      .text("<tool_call>\n{\"name\": \""), .name, .text("\", \"arguments\": "), .arguments(.json),
      .text("}\n</tool_call>"),
    ], separator: "\n", sectionClose: "", allowsSeveral: true),
  ToolCallPattern(
    sectionOpen: "", call: [.text("[TOOL_CALLS]"), .name, .text("[CALL_ID]"), .id, .text("[ARGS]"), .arguments(.json)],
    separator: "", sectionClose: "", allowsSeveral: true),
  ToolCallPattern(
    sectionOpen: "<calls>",
    call: [
      .text("<function="), .name, .text(">"),
      .arguments(
        .tagged(
          .init(
            open: "\n<parameter=", keyCloseForString: ">\n", keyCloseForOther: ">\n",
            valueClose: "\n</parameter>"))), .text("\n</function>"),
    ], separator: "\n", sectionClose: "</calls>",
    allowsSeveral: true),
]
