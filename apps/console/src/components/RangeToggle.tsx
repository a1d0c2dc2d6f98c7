import { ToggleGroup, ToggleGroupItem } from '@patternfly/react-core';
import type { HistoryRange } from './charts/ranges.js';

export function RangeToggle({
  value,
  onChange,
  label,
}: {
  value: HistoryRange;
  onChange: (range: HistoryRange) => void;
  label: string;
}) {
  return (
    <ToggleGroup isCompact aria-label={label}>
      <ToggleGroupItem text="24 h" isSelected={value === '24h'} onChange={() => onChange('24h')} />
      <ToggleGroupItem text="7 d" isSelected={value === '7d'} onChange={() => onChange('7d')} />
    </ToggleGroup>
  );
}
