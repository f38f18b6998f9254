import Foundation
import HybridInferenceCore
import HybridInferenceJinja

/// One OS thread that runs llama.cpp work, in order: a compute lane (`ComputeLanes`).
///
/// Why not a serial `DispatchQueue`: libdispatch runs a serial queue's work on
/// whichever worker thread is free, and llama.cpp's OpenMP build keeps a team
/// of threads per calling thread. A new caller means a new team, while the old
/// one spins on the same cores; decode speed then drops and wobbles. A thread
/// of our own keeps one team for the life of the process. It also keeps
/// blocking C calls off Swift's cooperative threads.
final class LlamaThread: Sendable {
  private enum Job {
    case run(@Sendable () -> Void)
    case stop
  }

  /// The jobs and the wake-up, shared with the thread itself (which must not
  /// hold the `LlamaThread`, or it would never be released).
  private final class Inbox: Sendable {
    let jobs = Locked<[Job]>([])
    let wake = DispatchSemaphore(value: 0)

    func post(_ job: Job) {
      jobs.withLock { $0.append(job) }
      wake.signal()
    }

    func next() -> Job {
      wake.wait()
      return jobs.withLock { $0.isEmpty ? .stop : $0.removeFirst() }
    }
  }

  private let inbox = Inbox()

  /// The stack of a lane: glibc's default for a new thread (8 MiB), as
  /// Foundation's `Thread` gives; llama.cpp's graph code runs on it.
  static let stackSize = 8 << 20

  /// What a request whose lane the OS refused fails with.
  static let refused = "the OS refused a thread for llama.cpp's compute (a thread or memory limit)"

  /// Starts the thread; nil when the OS refuses it (`OSThread`: Foundation's
  /// `Thread` would never run the loop, and every job posted to it would
  /// wait for ever).
  init?(name: String, stackSize: Int = LlamaThread.stackSize) {
    let inbox = self.inbox
    let started = OSThread.start(stackSize: stackSize, name: name) {
      while case .run(let job) = inbox.next() { job() }
    }
    guard started else { return nil }
  }

  deinit {
    inbox.post(.stop)
  }

  /// Runs `job` after every job posted before it.
  func async(_ job: @escaping @Sendable () -> Void) {
    inbox.post(.run(job))
  }
}
