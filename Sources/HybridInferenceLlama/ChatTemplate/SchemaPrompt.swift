import HybridInferenceCore
import HybridInferenceJinja

/// Tells an on-device model which JSON to write, in the prompt itself.
///
/// The grammar guarantees the shape but not the meaning: without the schema
/// in view a small model fills `title` with the question, or repeats one list
/// item until the token limit. The schema's text (descriptions included:
/// they are what the model sees of each field) is appended to the last user
/// message of this request only; the transcript keeps the prompt as written.
/// Gemini gets the schema in `responseJsonSchema` instead.
enum SchemaPrompt {
  static func attach(_ schema: GenerationSchema, to messages: inout [ChatTemplate.Message])
    throws(HybridInferenceError)
  {
    guard let last = messages.lastIndex(where: { $0.role == "user" }) else { return }
    messages[last].content += "\n\nAnswer with JSON that follows this JSON Schema: " + (try schema.jsonSchemaText())
  }
}
