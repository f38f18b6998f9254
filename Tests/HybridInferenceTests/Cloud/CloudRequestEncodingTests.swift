import Foundation
import HybridInference
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What goes on the wire, as the server received it.
final class CloudRequestEncodingTests: CloudTestCase {
  func testOptionsInstructionsAndSafetySettings_areSentInTheirWireForm() async throws {
    let name = "echo~\(uniqueID())"
    let model = server.model(
      name,
      safetySettings: [SafetySetting(category: .harassment, threshold: .blockOnlyHigh)])
    let session = GenerativeModelSession(model: model, instructions: "Be brief.", logHandler: .silent)
    let options = HybridGenerationOptions.hybrid(
      gemini: GenerationConfig(
        temperature: 0.5, topP: 0.9, maxOutputTokens: 64,
        thinkingConfig: ThinkingConfig(thinkingLevel: .high, includeThoughts: true)),
      foundationModels: GenerationOptions(temperature: 0.1))
    _ = try await session.respond(to: "Why is the sky blue?", options: options)

    let request = try await server.lastRequest(name)
    XCTAssertEqual(request["path"] as? String, "/v1beta/models/\(name):generateContent")
    XCTAssertEqual(request["query"] as? String, "", "nothing in the query, the key least of all")
    XCTAssertEqual(request["keyHeaderPresent"] as? Bool, true)
    let body = try XCTUnwrap(request["body"] as? [String: Any])
    XCTAssertEqual(Set(body.keys), ["contents", "systemInstruction", "generationConfig", "safetySettings"])
    let config = try XCTUnwrap(body["generationConfig"] as? [String: Any])
    XCTAssertEqual(
      Set(config.keys), ["temperature", "topP", "maxOutputTokens", "thinkingConfig"],
      "nil fields are omitted, the on-device half is not sent")
    let thinking = try XCTUnwrap(config["thinkingConfig"] as? [String: Any])
    XCTAssertEqual(thinking["thinkingLevel"] as? String, "HIGH")
    XCTAssertEqual(thinking["includeThoughts"] as? Bool, true)
    let system = try XCTUnwrap(body["systemInstruction"] as? [String: Any])
    XCTAssertNil(system["role"])
    XCTAssertEqual((system["parts"] as? [[String: Any]])?.first?["text"] as? String, "Be brief.")
    let safety = try XCTUnwrap(body["safetySettings"] as? [[String: String]])
    XCTAssertEqual(safety, [["category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"]])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    XCTAssertEqual(contents.count, 1)
    XCTAssertEqual(contents.first?["role"] as? String, "user")
  }

  func testHistory_isSentBackWithThoughtSignaturesAndFunctionCallsUnchanged() async throws {
    let files = try GeminiTestServer.requireFixtures()
    let fixture = "unary-success-thinking-function-call-thought-summary-signature.json"
    XCTAssertTrue(files.contains(fixture))
    // A model that answers from the fixture, then one that echoes: both on
    // the same session, so the second request carries the first answer.
    let first = try await GenerativeModelSession(
      model: server.model("fixture-\(fixture)"), logHandler: .silent
    ).respond(to: "How many days until New Year's Eve?")
    let original = try XCTUnwrap(first.rawResponse.candidates.first?.content)
    let signature = try XCTUnwrap(original.parts.compactMap(\.thoughtSignature).first)

    // Signatures go back only to the model that made them (the entry's
    // producer): the same fixture model is asked again.
    let name = "fixture-\(fixture)"
    let transcript = Transcript(
      instructions: nil,
      entries: [
        .prompt("How many days until New Year's Eve?"),
        .response(original, modelVersion: "gemini-2.5-flash", producer: first.rawResponse.producer),
        .prompt("Thanks"),
      ])
    _ = try await server.model(name).respond(to: ModelRequest(transcript: transcript))

    let resentRequest = try await server.lastRequest(name)
    let body = try XCTUnwrap(resentRequest["body"] as? [String: Any])
    let contents = try XCTUnwrap(body["contents"] as? [[String: Any]])
    XCTAssertEqual(contents.map { $0["role"] as? String }, ["user", "model", "user"])
    let sentParts = try XCTUnwrap(contents[1]["parts"] as? [[String: Any]])
    XCTAssertEqual(sentParts.count, original.parts.count)
    XCTAssertEqual(sentParts.compactMap { $0["thoughtSignature"] as? String }, [signature])
    XCTAssertNotNil(sentParts.first { $0["functionCall"] != nil })
    // Byte for byte: the model turn decodes back to what the server sent.
    let resent = try JSONDecoder().decode(
      Content.self, from: JSONSerialization.data(withJSONObject: contents[1]))
    XCTAssertEqual(resent.parts, original.parts)
  }

  func testStreamingUsesAltSSE_andBaseURLPathAndVersionAreHonoured() async throws {
    let name = "echo~\(uniqueID())"
    _ = try await session(name).streamResponse(to: "hi").collect()
    let request = try await server.lastRequest(name)
    XCTAssertEqual(request["path"] as? String, "/v1beta/models/\(name):streamGenerateContent")
    XCTAssertEqual(request["query"] as? String, "alt=sse")
    let headers = try XCTUnwrap(request["headers"] as? [String: String])
    XCTAssertEqual(headers["content-type"], "application/json")
    XCTAssertNil(headers["x-goog-api-key"], "the server's record strips the key; it was a header")

    let v1 = CloudGeminiModel(
      name: "models/\(name)", apiKey: GeminiTestServer.apiKey,
      baseURL: try XCTUnwrap(URL(string: server.baseURL.absoluteString + "/")), apiVersion: "v1",
      requestOptions: .fastTests, logHandler: .silent)
    _ = try await GenerativeModelSession(model: v1, logHandler: .silent).respond(to: "hi")
    let v1Request = try await server.lastRequest(name)
    XCTAssertEqual(v1Request["path"] as? String, "/v1/models/\(name):generateContent")
  }

  func testUnknownTopLevelField_isRefusedLikeGoogle() async throws {
    // The server's validation is what makes the encoding tests meaningful.
    var request = URLRequest(url: server.baseURL.appendingPathComponent("v1beta/models/echo:generateContent"))
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(GeminiTestServer.apiKey, forHTTPHeaderField: "x-goog-api-key")
    request.httpBody = Data(#"{"contents":[{"role":"user","parts":[{"text":"x"}]}],"prompt":"x"}"#.utf8)
    let (data, response) = try await URLSession.shared.data(for: request)
    XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 400)
    XCTAssertTrue(String(decoding: data, as: UTF8.self).contains("Unknown name \\\"prompt\\\""))
  }

  func testCountTokens_sendsContentsOrAWholeRequest() async throws {
    let name = "echo~\(uniqueID())"
    let model = server.model(name)
    let plain = try await model.countTokens("one two three")
    XCTAssertEqual(plain, 3)
    let plainRequest = try await server.lastRequest(name)
    let plainBody = try XCTUnwrap(plainRequest["body"] as? [String: Any])
    XCTAssertEqual(Set(plainBody.keys), ["contents"])

    let transcript = Transcript(instructions: "be brief", entries: [.prompt("four five")])
    let withInstructions = try await model.countTokens(transcript)
    XCTAssertEqual(withInstructions, 4)
    let request = try await server.lastRequest(name)
    XCTAssertEqual(request["path"] as? String, "/v1beta/models/\(name):countTokens")
    let body = try XCTUnwrap(request["body"] as? [String: Any])
    XCTAssertEqual(Set(body.keys), ["generateContentRequest"])
    let inner = try XCTUnwrap(body["generateContentRequest"] as? [String: Any])
    XCTAssertEqual(inner["model"] as? String, "models/\(name)")
  }
}
