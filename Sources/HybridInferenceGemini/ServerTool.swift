import HybridInferenceCore

/// One of Google's tools that run on Google's side: the model calls it and
/// reads its result within one request, with nothing for the app to run.
///
/// ```swift
/// let grounded = CloudGeminiModel(name: "gemini-3.1-flash-lite",
///                                 serverTools: [.googleSearch(), .codeExecution(), .urlContext()])
/// let answer = try await GenerativeModelSession(model: grounded).respond(to: "Who won yesterday?")
/// let grounding = answer.rawResponse.candidates.first?.groundingMetadata
/// // Google's terms ask apps to show the search suggestions:
/// // grounding?.searchEntryPoint?.renderedContent (HTML)
/// ```
///
/// Each is declared on every request as an entry of Gemini's `tools`,
/// beside the session's function declarations. What they did comes back on
/// the response: `Candidate.groundingMetadata` (the queries, sources and
/// search suggestions of `googleSearch`), `Candidate.urlContextMetadata`
/// (what `urlContext` fetched), and `executableCode` / `codeExecutionResult`
/// parts (what `codeExecution` ran), which the transcript keeps.
///
/// The on-device model has none of them: a hybrid would answer from the
/// device without grounding whenever it falls back or prefers the device,
/// so an app whose answers must be grounded uses the cloud model alone.
///
/// A struct with static functions, so that options can be added later
/// (`googleSearch(excludeDomains:)`) without breaking a call.
public struct ServerTool: Sendable, Hashable, CustomStringConvertible {
  enum Kind: String, Sendable, Hashable {
    case googleSearch, codeExecution, urlContext
  }

  let kind: Kind

  /// Grounding with Google Search: the model searches and cites the web.
  public static func googleSearch() -> ServerTool { ServerTool(kind: .googleSearch) }

  /// Code execution: the model writes and runs Python in Google's sandbox.
  public static func codeExecution() -> ServerTool { ServerTool(kind: .codeExecution) }

  /// URL context: the model reads the pages whose URLs the prompt names.
  public static func urlContext() -> ServerTool { ServerTool(kind: .urlContext) }

  /// The tool's wire name (`googleSearch`).
  public var description: String { kind.rawValue }
}
