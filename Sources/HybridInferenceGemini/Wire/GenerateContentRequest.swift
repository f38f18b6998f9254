import HybridInferenceCore
import HybridInferenceRemote

/// The body of `:generateContent` and `:streamGenerateContent` (REST
/// `GenerateContentRequest`).
///
/// Nil fields are left out of the JSON (the synthesized `Encodable` uses
/// `encodeIfPresent`), so the server applies its own defaults and a field the
/// API does not know is never sent.
struct GenerateContentRequest: Sendable, Hashable, Encodable {
  /// Every turn of the conversation, oldest first, ending with the new prompt.
  var contents: [Content]
  /// The session's instructions.
  var systemInstruction: Content?
  /// The cloud half of the request's options.
  var generationConfig: GenerationConfig?
  /// The model's safety thresholds.
  var safetySettings: [SafetySetting]?
  /// The session's tools, as function declarations, then the model's
  /// server-side tools, one entry each.
  var tools: [GeminiTool]?
  /// How the model may call them, when not Gemini's default (`AUTO`).
  var toolConfig: GeminiToolConfig?

  /// The wire form of a session request: transcript entries become contents
  /// with their role and parts unchanged (thought signatures and function
  /// calls included), instructions become the system instruction.
  ///
  /// An empty turn is never sent: Gemini refuses a content with no parts
  /// (400 on every later turn of the conversation), and an answer can
  /// legitimately be empty (a thinking model cut off at MAX_TOKENS before any
  /// text, a local model whose first token ends its turn). Such a turn stays
  /// in the transcript, where it is true, and is left out here; so are parts
  /// that carry nothing (`Part.isBlank`).
  ///
  /// A request's `responseSchema` becomes `responseMimeType`
  /// `application/json` plus `responseJsonSchema`, after checking that Gemini
  /// accepts every keyword in it (`GeminiSchemaCheck`).
  ///
  /// Attachments travel as the `inlineData` (base64) and `fileData` parts
  /// the transcript keeps; inline media over `inlineMediaLimit` encoded
  /// bytes, summed over every turn, is `requestTooLarge` (`InlineMediaSize`).
  /// A call or output nested deeper than `JSONValue.maximumDepth` is
  /// `invalidTranscript`; one within it is written by the library's own
  /// JSON writer (`RequestBodyEncoder`), so Foundation's encoder, which
  /// counts the body's own levels too, never refuses it.
  ///
  /// The request's tools become `functionDeclarations` (each schema checked
  /// the same way) and a tool choice other than `.auto` becomes
  /// `toolConfig.functionCallingConfig`. The transcript's calls and outputs
  /// travel as the `functionCall` and `functionResponse` parts they are, with
  /// their ids and thought signatures unchanged.
  ///
  /// Thought signatures go back only to the model that made them: `producer`
  /// is the model this request is for (`GeminiEndpoint.producer`), and an
  /// entry another producer wrote (`Transcript.Entry.producer`) is sent
  /// without its signatures, which Gemini would refuse (400). Gemini checks
  /// signatures of the current turn only, and the current turn's rounds
  /// always come from the model asked now (a tool pins the request to it),
  /// so what goes is never needed. Thought parts go back only to their
  /// producer too: another model's reasoning (the on-device model's, after
  /// a hybrid fell back) is its own and is left out.
  ///
  /// Each of the model's `serverTools` becomes one more `tools` entry
  /// (`{"googleSearch": {}}`), declared on every request, duplicates once.
  init(
    _ request: ModelRequest, safetySettings: [SafetySetting]?, serverTools: [ServerTool] = [],
    producer: String? = nil, inlineMediaLimit: Int = RequestOptions.defaultMaximumInlineMediaBytes
  ) throws(HybridInferenceError) {
    try InlineMediaSize.check(request.transcript, limit: inlineMediaLimit)
    try request.transcript.checkNesting()
    var config = request.options.gemini
    if let schema = request.responseSchema {
      try GeminiSchemaCheck.check(schema)
      config = config ?? GenerationConfig()
      config?.responseMimeType = "application/json"
      config?.responseJsonSchema = schema
    }
    self.init(
      transcript: request.transcript, generationConfig: config, safetySettings: safetySettings, producer: producer)
    if !request.tools.isEmpty {
      var declarations: [GeminiTool.FunctionDeclaration] = []
      for tool in request.tools {
        try GeminiSchemaCheck.check(tool.parameters)
        declarations.append(
          GeminiTool.FunctionDeclaration(
            name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters))
      }
      tools = [GeminiTool(functionDeclarations: declarations)]
      toolConfig = GeminiToolConfig(request.options.toolChoice)
    }
    var declared: Set<ServerTool> = []
    for tool in serverTools where declared.insert(tool).inserted {
      tools = (tools ?? []) + [GeminiTool(tool)]
    }
  }

  init(
    transcript: Transcript, generationConfig: GenerationConfig?, safetySettings: [SafetySetting]?,
    producer: String? = nil
  ) {
    contents = transcript.entries.compactMap { entry in
      let signed = entry.producer == producer
      // Another backend's thoughts (the device's, which have no producer)
      // stay in the transcript and are never sent.
      let parts = entry.content.parts.lazy.filter { signed || $0.thought != true }.map { part in
        guard !signed, part.thoughtSignature != nil else { return part }
        var unsigned = part
        unsigned.thoughtSignature = nil
        return unsigned
      }.filter { !$0.isBlank }
      return parts.isEmpty ? nil : Content(role: entry.role.rawValue, parts: Array(parts))
    }
    if let instructions = transcript.instructions, !instructions.isEmpty {
      systemInstruction = Content(text: instructions)
    }
    self.generationConfig = generationConfig
    self.safetySettings = safetySettings?.isEmpty == false ? safetySettings : nil
  }
}
