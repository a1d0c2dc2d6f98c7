import {
  Card,
  CardBody,
  CardTitle,
  Content,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
} from '@patternfly/react-core';
import { Link } from '../lib/router.js';

/** A number in a card, linked to where it comes from when there is such a place. */
export function CountCard({
  title,
  value,
  to,
  id,
  of,
}: {
  title: string;
  value: number;
  to?: string;
  id: string;
  /** A total the value is a part of ("7 of 10"). */
  of?: number;
}) {
  return (
    <Card isCompact>
      <CardTitle component="h2">{title}</CardTitle>
      <CardBody>
        <span className="fleet-count" data-testid={`count-${id}`}>
          {to ? <Link to={to}>{value}</Link> : value}
        </span>
        {of !== undefined ? <span className="fleet-muted"> of {of} clusters</span> : null}
      </CardBody>
    </Card>
  );
}

/** Counts by value in a card (platform, topology, ...). */
export function BreakdownCard({
  title,
  rows,
}: {
  title: string;
  rows: { value: string; count: number }[];
}) {
  return (
    <Card isCompact>
      <CardTitle component="h2">{title}</CardTitle>
      <CardBody>
        {rows.length === 0 ? (
          <Content component="p">No clusters.</Content>
        ) : (
          <DescriptionList isHorizontal isCompact>
            {rows.map((row) => (
              <DescriptionListGroup key={row.value}>
                <DescriptionListTerm>{row.value}</DescriptionListTerm>
                <DescriptionListDescription>{row.count}</DescriptionListDescription>
              </DescriptionListGroup>
            ))}
          </DescriptionList>
        )}
      </CardBody>
    </Card>
  );
}
