// The charts load after the first screen. Recharts (under @mantine/charts) is the largest part
// of the app's script, and no screen needs a chart to be usable: the tiles, lists and links
// show at once, and each chart fills a box of its own height when its script is in (a few ms
// from the app's own files). `make bench-desktop` measures the launch this shortens.
import { type ComponentProps, lazy, Suspense } from "react";

const DeliveryChartImpl = lazy(() =>
  import("../overview/DeliveryChart").then((m) => ({ default: m.DeliveryChart })),
);
const DlqTrendImpl = lazy(() =>
  import("../overview/DlqTrend").then((m) => ({ default: m.DlqTrend })),
);
const RowSparklineImpl = lazy(() =>
  import("../health/RowSparkline").then((m) => ({ default: m.RowSparkline })),
);

export function DeliveryChart(props: ComponentProps<typeof DeliveryChartImpl>) {
  return (
    <Suspense fallback={<div style={{ height: (props.height ?? 220) + 24 }} />}>
      <DeliveryChartImpl {...props} />
    </Suspense>
  );
}

export function DlqTrend(props: ComponentProps<typeof DlqTrendImpl>) {
  return (
    <Suspense fallback={<div style={{ height: 28 }} />}>
      <DlqTrendImpl {...props} />
    </Suspense>
  );
}

export function RowSparkline(props: ComponentProps<typeof RowSparklineImpl>) {
  return (
    <Suspense fallback={<div style={{ width: 48, height: 22 }} />}>
      <RowSparklineImpl {...props} />
    </Suspense>
  );
}
