// The Boost peers of cio's fiber switch benchmark (B2), run by bench/driver.py with cio_bench's
// command line:
//
//   boost-peer B2 boost-context --seconds S   two boost::context::fiber resuming each other
//   boost-peer B2 boost-fiber   --seconds S   two Boost.Fiber fibers yielding (a scheduler-level
//                                             switch: the ready queue, not just the registers)
//
// Prints "RESULT main <ns> ns/switch" (and NA for anything else).
#include <boost/context/fiber.hpp>
#include <boost/fiber/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

namespace ctx = boost::context;

static double now_ns()
{
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Calls body(n) with growing n until `seconds` are used (after a ~10 % warm-up); ns per unit of n.
static double measure(const std::function<void(uint64_t)> &body, double seconds)
{
    uint64_t n = 1;
    for (double start = now_ns(); now_ns() - start < seconds * 0.1e9; n *= 2)
        body(n);
    double total = 0;
    uint64_t ops = 0;
    while (total < seconds * 1e9) {
        double t = now_ns();
        body(n);
        double took = now_ns() - t;
        total += took;
        ops += n;
        if (took < 50e6)
            n *= 2;
    }
    return total / (double)ops;
}

// One unit of n: two switches (f1 -> f2 -> f1), as cio_bench's B2 counts them.
static void context_body(uint64_t n)
{
    ctx::fiber f2{[n](ctx::fiber &&back) {
        for (uint64_t i = 0; i < n; i++)
            back = std::move(back).resume();
        return std::move(back);
    }};
    for (uint64_t i = 0; i < n; i++)
        f2 = std::move(f2).resume();
    f2 = std::move(f2).resume(); // let it finish
}

static void fiber_body(uint64_t n)
{
    boost::fibers::fiber a([n] {
        for (uint64_t i = 0; i < n; i++)
            boost::this_fiber::yield();
    });
    boost::fibers::fiber b([n] {
        for (uint64_t i = 0; i < n; i++)
            boost::this_fiber::yield();
    });
    a.join();
    b.join();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: boost-peer B2 boost-context|boost-fiber [--seconds S] [--smoke]\n");
        return 2;
    }
    double seconds = 0.3;
    for (int i = 3; i < argc; i++) {
        if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = std::atof(argv[++i]);
        else if (std::strcmp(argv[i], "--smoke") == 0)
            seconds = 0.01;
    }
    std::string bench = argv[1], who = argv[2];
    if (bench != "B2") {
        std::printf("NA no Boost version of %s\n", bench.c_str());
        return 3;
    }
    if (who == "boost-context")
        std::printf("RESULT main %g ns/switch\n", measure(context_body, seconds) / 2.0);
    else if (who == "boost-fiber")
        std::printf("RESULT main %g ns/switch\n", measure(fiber_body, seconds) / 2.0);
    else
        return 2;
    return 0;
}
