import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The floor under the client: the same POST through a bare delegate-based
/// URLSession (what `HTTPTransport` uses), with no encoding, decoding,
/// timers or streams. The gap between it and curl is FoundationNetworking's;
/// the gap between it and `CloudGeminiModel` is the library's.
final class BareURLSession: NSObject, URLSessionDataDelegate, Sendable {
  private let waiters = Mutex<[Int: CheckedContinuation<Void, Never>]>([:])
  private let request: URLRequest

  init(server: LoopbackServer, prompt: String) {
    var request = URLRequest(
      url: server.baseURL.appendingPathComponent("v1beta/models/echo:generateContent"))
    request.httpMethod = "POST"
    request.httpBody = Data(#"{"contents":[{"role":"user","parts":[{"text":"\#(prompt)"}]}]}"#.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue(LoopbackServer.apiKey, forHTTPHeaderField: "x-goog-api-key")
    self.request = request
  }

  /// The same floor for any request (the fleet benchmark's, to llama-server).
  init(request: URLRequest) {
    self.request = request
  }

  /// One POST, answered when the task completes (the body is discarded).
  func post(on session: URLSession) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let task = session.dataTask(with: request)
      waiters.withLock { $0[task.taskIdentifier] = continuation }
      task.resume()
    }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    waiters.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.resume()
  }

  /// A session whose delegate is `self`; invalidate it when done.
  func makeSession(maximumConnectionsPerHost: Int = 32) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
    return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
  }
}
