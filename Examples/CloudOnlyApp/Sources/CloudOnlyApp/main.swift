import Foundation
import HybridInferenceCloud

// Prefer a fleet of OpenAI-compatible servers (llama-server, vLLM, a gateway),
// fall back to Gemini when the fleet is offline. Nothing here links llama.cpp.
let environment = ProcessInfo.processInfo.environment
let prompt = CommandLine.arguments.dropFirst().joined(separator: " ")
guard !prompt.isEmpty, let fleetURL = URL(string: environment["OPENAI_BASE_URL"] ?? "http://127.0.0.1:8080/v1")
else {
  print("usage: CloudOnlyApp PROMPT  (the fleet at OPENAI_BASE_URL, Gemini with GEMINI_API_KEY)")
  exit(2)
}
let fleet = OpenAICompatibleModel(name: "smollm2", baseURL: fleetURL, apiKey: nil)
let cloud = CloudGeminiModel(name: "gemini-3.1-flash-lite")
let session = GenerativeModelSession(model: .hybridModel(primary: fleet, secondary: cloud))
do {
  let response = try await session.respond(to: prompt)
  print(response.content, "(\(response.rawResponse.modelVersion))")
} catch {
  print("error: \(error)")
  exit(1)
}
